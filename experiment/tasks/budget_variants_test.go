package tasks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/scenario"
)

// compareMeasured are peak RSS figures of `wattsched compare` over PUE
// variants of one policy and one seed (2 CPUs, GOMAXPROCS runs going at
// once), measured with /usr/bin/time -f %M as docs/performance.md gives
// (issue 40: 200 variants were estimated at 237 MiB and peaked at 1.99
// GB). Each estimate must be at least the measured peak (never admit a
// run that passes --max-memory) and within 1.5x of it.
var compareMeasured = []struct {
	name     string
	pods     string // "default" or "60 pods over H hours"
	hours    int    // for the 60-pod lists: the span
	variants int
	peakKB   int64
	within   float64
}{
	{"openb Default, 10 variants", "default", 0, 10, 117_912, 1.5},
	{"openb Default, 30 variants", "default", 0, 30, 275_660, 1.5},
	{"openb Default, 200 variants", "default", 0, 200, 1_566_568, 1.5},
	{"60 pods over 9 hours, 200 variants", "short", 9, 200, 88_684, 1.5},
	{"60 pods over 3,543 hours, 50 variants", "long", 3543, 50, 142_056, 1.5},
}

func TestEstimateCompareVariantsMeasured(t *testing.T) {
	// Seeds rather than systems: examples/byo-replay.yaml (4 policies) with
	// --seeds 20, 80 runs: 144,984 KB.
	byo, err := scenario.Load("../../examples/byo-replay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byo.Seeds = 20
	in, err := LoadInputs(byo)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "examples/byo-replay.yaml, 20 seeds", EstimateCompare(byo, in, 2).Bytes, 144_984, 1.5)
	for _, c := range compareMeasured {
		var b strings.Builder
		b.WriteString("name: v\nmode: replay\nseeds: 1\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\nvariants:\n")
		for j := range c.variants {
			fmt.Fprintf(&b, "  - name: v%d\n    pue: %.3f\n", j, 1.0+0.001*float64(j+1))
		}
		var in *Inputs
		if c.pods == "default" {
			b.WriteString("trace: {pods: default}\n")
			s, err := scenario.Parse([]byte(b.String()), "v.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if in, err = LoadInputs(s); err != nil {
				t.Fatal(err)
			}
			check(t, c.name, EstimateCompare(s, in, 2).Bytes, c.peakKB, c.within)
			continue
		}
		// 60 pods, one every span/60 s, each running 3,600 s and up to
		// 5,400 s more (the fixture of the measurement).
		step := int64(300)
		if c.hours > 9 {
			step = 216000
		}
		var pods []job.Task
		for i := range 60 {
			pods = append(pods, timedPod(int64(i)*step, float64(3600+(i%7)*900)))
		}
		b.WriteString("trace: {pods: default}\n")
		s, err := scenario.Parse([]byte(b.String()), "v.yaml")
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.name, EstimateCompare(s, budgetInputs(6, pods...), 2).Bytes, c.peakKB, c.within)
	}
}

func check(t *testing.T, name string, est, peakKB int64, within float64) {
	t.Helper()
	peak := peakKB << 10
	ratio := float64(est) / float64(peak)
	t.Logf("%s: estimate %.1f MiB, measured %.1f MiB, ratio %.2f", name, float64(est)/(1<<20), float64(peak)/(1<<20), ratio)
	if ratio < 1 {
		t.Errorf("%s: estimate %d bytes is %.2fx the measured peak %d, want at least 1x", name, est, ratio, peak)
	}
	if within > 0 && ratio > within {
		t.Errorf("%s: estimate %d bytes is %.2fx the measured peak %d, want at most %gx", name, est, ratio, peak, within)
	}
}

// TestEstimateReplayMeasured: the peak of a replay where the pods drive
// it, measured with /usr/bin/time -f %M on the shipped binary (make
// build): the openb Default trace's 8,152 pods cycled to 100,000 (pod i is
// pod i mod 8,152 shifted by 7 s per cycle: the same span), one FGD
// policy, 422,712 KiB. The estimate must be 1..1.5x of it.
func TestEstimateReplayMeasured(t *testing.T) {
	s, err := scenario.Parse([]byte("name: r\nmode: replay\ntrace: {pods: default}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, err := LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	base := in.Pods
	pods := make([]job.Task, 100_000)
	for i := range pods {
		pods[i] = base[i%len(base)]
		pods[i].Submit += job.Time(i/len(base)) * 7000
	}
	in.Pods = pods
	check(t, "openb Default cycled to 100,000 pods, 1 policy", EstimateReplay(s, in).Bytes, 422_712, 1.5)
}
