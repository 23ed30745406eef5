package job

import "testing"

func TestDemandValidate(t *testing.T) {
	cases := []struct {
		name string
		d    Demand
		ok   bool
	}{
		{"cpu only", Demand{CPUMilli: 4000, MemMiB: 100}, true},
		{"shared", Demand{CPUMilli: 1, GPUCount: 1, GPUMilli: 460}, true},
		{"whole 8", Demand{GPUCount: 8, GPUMilli: 1000}, true},
		{"gpu milli without gpu", Demand{GPUMilli: 5}, false},
		{"shared several", Demand{GPUCount: 2, GPUMilli: 500}, false},
		{"nine gpus", Demand{GPUCount: 9, GPUMilli: 1000}, false},
		{"over 1000", Demand{GPUCount: 1, GPUMilli: 1001}, false},
		{"negative cpu", Demand{CPUMilli: -1}, false},
		{"mig instance", Demand{GPUCount: 1, GPUMilli: 428, MIGProfile: "3g.40gb"}, true},
		{"mig full gpu", Demand{GPUCount: 1, GPUMilli: 1000, MIGProfile: "7g.80gb"}, true},
		{"mig two instances", Demand{GPUCount: 2, GPUMilli: 1000, MIGProfile: "7g.80gb"}, false},
		{"mig without gpu", Demand{MIGProfile: "1g.10gb"}, false},
		{"mig spaced name", Demand{GPUCount: 1, GPUMilli: 142, MIGProfile: " 1g.10gb"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.d.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate(%+v) = %v, want ok=%v", tc.d, err, tc.ok)
			}
		})
	}
}

func TestClassifyAndSpec(t *testing.T) {
	ts := []Task{
		{Demand: Demand{CPUMilli: 1}},
		{Demand: Demand{CPUMilli: 2}},
		{Demand: Demand{CPUMilli: 1}},
		{Demand: Demand{CPUMilli: 1, GPUSpec: []string{"T4"}}},
		{Demand: Demand{CPUMilli: 1, GPUCount: 1, GPUMilli: 142, MIGProfile: "1g.10gb"}},
		{Demand: Demand{CPUMilli: 1, GPUCount: 1, GPUMilli: 142, MIGProfile: "1g.10gb+me"}},
	}
	// A MIG profile is part of the demand: two instances of the same
	// share but different profiles are two classes.
	if n := Classify(ts); n != 5 {
		t.Fatalf("Classify = %d classes, want 5", n)
	}
	if ts[0].Class != ts[2].Class || ts[0].Class == ts[3].Class {
		t.Errorf("classes = %d %d %d %d", ts[0].Class, ts[1].Class, ts[2].Class, ts[3].Class)
	}
	d := Demand{GPUSpec: []string{"T4", "P100"}}
	if !d.AcceptsGPU("P100") || d.AcceptsGPU("A10") || d.AcceptsGPU("") {
		t.Error("AcceptsGPU wrong")
	}
	if (Demand{}).AcceptsGPU("") != true {
		t.Error("unconstrained task must accept any node")
	}
}
