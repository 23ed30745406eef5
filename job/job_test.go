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
	}
	if n := Classify(ts); n != 3 {
		t.Fatalf("Classify = %d classes, want 3", n)
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
