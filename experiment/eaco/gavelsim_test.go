package eaco

import (
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/scenario"
)

// deadlines: none leaves no deadline and no priority (FIFO is then arrival
// order), with the arrivals and job types of deadlines: drawn; drawn keeps
// the classes (some high-priority jobs, which FIFO puts first).
func TestScenarioWorkloadDeadlines(t *testing.T) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	drawn := &scenario.ColocSpec{Arrivals: "poisson", PerHour: 24, Count: 200}
	none := *drawn
	none.Deadlines = scenario.DeadlinesNone
	a, b := e.ScenarioWorkload(e.Pool, drawn, 3), e.ScenarioWorkload(e.Pool, &none, 3)
	prio := 0
	for i := range a {
		if a[i].Priority > 0 {
			prio++
		}
		if b[i].Priority != 0 || b[i].Deadline != policy.NoDeadline {
			t.Fatalf("deadlines none: job %d has priority %d, deadline %d", i, b[i].Priority, b[i].Deadline)
		}
		if a[i].Submit != b[i].Submit || a[i].Key != b[i].Key || a[i].Steps != b[i].Steps {
			t.Fatalf("job %d differs between drawn and none beyond its deadline", i)
		}
	}
	if prio == 0 {
		t.Fatal("deadlines drawn: no high-priority job among 200")
	}
	st := &policy.ColocState{}
	for i := range b {
		st.Jobs = append(st.Jobs, &policy.ColocView{Job: &b[i], Set: -1})
	}
	for i, v := range st.Waiting() {
		if v.Job.ID != i {
			t.Fatalf("deadlines none: queue position %d holds job %d, want arrival order", i, v.Job.ID)
		}
	}
}
