package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fcfs"
	"github.com/wattsched/wattsched/policy/vahrm"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// hpcRacks puts threeNodes' n0 and n1 in rack A (limit aW) and n2 in rack
// B (1000 W), under no row.
func hpcRacks(t *testing.T, aW hw.Watts) *power.Domains {
	t.Helper()
	tp := &power.Topology{Member: map[string]string{"n0": "A", "n1": "A", "n2": "B"},
		Domains: []power.Domain{{Name: "A", Level: "rack", Limit: aW}, {Name: "B", Level: "rack", Limit: 1000}}}
	d, _, err := tp.Bind([]string{"n0", "n1", "n2"}, []hw.Watts{30, 30, 30})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every HPC scheduler keeps each rack within its limit. Three 1-node GPU
// jobs (210 W a node running one, 30 W idle) arrive at 0 s for 10 s on
// threeNodes. Without domains all three start at 0 s. Rack A (n0, n1)
// limited to 300 W holds one job (210 + 30 = 240 W), not two (420 W): so
// one job waits until 10 s whatever the scheduler, A's predicted and
// actual peaks are 240 W, and the system has no limit at all.
func TestHPCDomains(t *testing.T) {
	truth := threeNodes()
	jobs := []policy.HPCJob{{ID: 0, Runtime: 10000, Nodes: 1, Type: 1}, {ID: 1, Runtime: 10000, Nodes: 1, Type: 1}, {ID: 2, Runtime: 10000, Nodes: 1, Type: 1}}
	mk := map[string]func() (policy.HPCScheduler, error){
		"VU-FCFS": func() (policy.HPCScheduler, error) {
			return fcfs.New(fcfs.Args{Variation: fcfs.Unaware}, policy.HPCDeps{Pred: truth})
		},
		"VA-FCFS-B": func() (policy.HPCScheduler, error) {
			return fcfs.New(fcfs.Args{Variation: fcfs.FullAware, Backfill: true}, policy.HPCDeps{Pred: truth})
		},
		"VAHRM": func() (policy.HPCScheduler, error) {
			return vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: truth})
		},
	}
	for _, name := range []string{"VU-FCFS", "VA-FCFS-B", "VAHRM"} {
		t.Run(name, func(t *testing.T) {
			for _, d := range []*power.Domains{nil, hpcRacks(t, 300)} {
				s, err := mk[name]()
				if err != nil {
					t.Fatal(err)
				}
				r, err := sim.RunHPC(jobs, s, sim.HPCOptions{Truth: truth, Seed: 1, Domains: d, DomainsAbove: 0.5})
				if err != nil {
					t.Fatal(err)
				}
				late := 0
				for _, j := range r.Jobs {
					if j.Start == 10000 {
						late++
					}
				}
				if d == nil {
					if late != 0 || r.Domains != nil {
						t.Errorf("no domains: starts %v, domain reports %v; want all at 0 s and none", starts(r), r.Domains)
					}
					continue
				}
				if late != 1 {
					t.Errorf("starts %v, want exactly one job at 10 s (rack A holds one job)", starts(r))
				}
				for _, sums := range [][]power.DomainSummary{r.Domains, r.DomainsActual} {
					if a := sums[0]; a.Name != "A" || a.Peak != 240 || a.Seconds != 20 {
						t.Errorf("rack A: %+v, want a peak of 240 W over 20 s", a)
					}
				}
			}
		})
	}
}

type domainCheater struct{}

func (domainCheater) ScheduleHPC(st *policy.HPCState) []policy.HPCStart {
	var out []policy.HPCStart
	for i, j := range st.Queue {
		if i < 2 && st.Free[i] {
			out = append(out, policy.HPCStart{Job: j.ID, Nodes: []int{i}, Pred: 210})
		}
	}
	return out
}

// The engine refuses a start that takes a rack over its limit, naming it,
// with no system limit: two GPU jobs on n0 and n1 (rack A, 300 W) at once.
func TestHPCRefusesDomainOverLimit(t *testing.T) {
	jobs := []policy.HPCJob{{ID: 0, Runtime: 10000, Nodes: 1, Type: 1}, {ID: 1, Runtime: 10000, Nodes: 1, Type: 1}}
	_, err := sim.RunHPC(jobs, domainCheater{}, sim.HPCOptions{Truth: threeNodes(), Domains: hpcRacks(t, 300)})
	if !errors.Is(err, sim.ErrPolicy) || !strings.Contains(err.Error(), `domain "A"`) {
		t.Fatalf("err = %v, want ErrPolicy naming domain A", err)
	}
	if r, err := sim.RunHPC(jobs, domainCheater{}, sim.HPCOptions{Truth: threeNodes(), Domains: hpcRacks(t, 450)}); err != nil || r.Jobs[1].Start != job.Time(0) {
		t.Fatalf("rack A at 450 W holds both (420 W): %v", err)
	}
}
