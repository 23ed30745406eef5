package tasks

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/scenario"
)

func TestExplainBudget(t *testing.T) {
	for _, tc := range []struct {
		runs, want int
	}{
		{1, ExplainBudget},
		{4, ExplainBudget / 4},
		{7, ExplainBudget / 7}, // rounded down: 7 x 4285 = 29,995 <= 30,000
		{ExplainBudget * 2, 1}, // never 0: every run explains at least one
		{0, ExplainBudget},
	} {
		if got := ExplainPerRun(tc.runs); got != tc.want {
			t.Errorf("ExplainPerRun(%d) = %d, want %d", tc.runs, got, tc.want)
		}
		if tc.runs > 0 && tc.want > 1 && ExplainPerRun(tc.runs)*tc.runs > ExplainBudget {
			t.Errorf("%d runs x %d decisions exceed the budget", tc.runs, tc.want)
		}
	}

	// A run that keeps 2 decisions and makes 5: two decisions' rows, and
	// the line printed after the tables says so.
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Build()
	s := &scenario.Scenario{Policies: []scenario.PolicySpec{{Name: "P", Scorers: []scenario.ScorerSpec{{Policy: "pwr", Weight: 2}}}}}
	env := &experiment.Env{ExplainDecisions: 2}
	l := newExplainLog(env, s, &s.Policies[0], 42, c)
	x := &policy.Explanation{Scorers: []policy.Weighted{{Name: "pwr", Weight: 2}}, Feasible: 2,
		Nodes: []policy.NodeScore{
			{Node: 1, Rank: 1, Raw: []int64{-60}, Score: []int64{100}, Total: 200},
			{Node: 0, Rank: 2, Raw: []int64{-270}, Score: []int64{0}, Total: 0}}}
	for i := range 5 {
		l.record(job.Time(i*1000), &job.Task{ID: job.ID(i), Name: "p"}, x)
	}
	res := &experiment.Results{Files: map[string][]byte{}, Listing: "jobs.csv, report.html"}
	addExplain(res, s, []*explainLog{l}, false)
	want := "policy,seed,time_s,task,name,rank,node,gpu_model,total,pwr_raw,pwr_score,pwr_weighted,feasible_nodes,filtered_out\n" +
		"P,42,0.000,0,p,1,b,T4,200,-60,100,200,2,\n" + // weighted: 2 x 100
		"P,42,0.000,0,p,2,a,T4,0,-270,0,0,,\n" +
		"P,42,1.000,1,p,1,b,T4,200,-60,100,200,2,\n" +
		"P,42,1.000,1,p,2,a,T4,0,-270,0,0,,\n"
	if got := string(res.Files[ExplainFile]); got != want {
		t.Errorf("explain.csv:\n%s\nwant:\n%s", got, want)
	}
	if res.Listing != "jobs.csv, explain.csv, report.html" {
		t.Errorf("listing %q", res.Listing)
	}
	if len(res.Tail) != 1 || !strings.Contains(res.Tail[0], "each run keeps its first 2, and 1 of the 1 runs made more (up to 5)") {
		t.Errorf("tail %q: want the bound said", res.Tail)
	}

	// A run of a policy that is not s's (a renamed copy, with a scorer s
	// lacks): its name, the columns s has, no panic.
	other := &scenario.PolicySpec{Name: "P with gate", Scorers: []scenario.ScorerSpec{{Policy: "fgd", Weight: 1}, {Policy: "pwr", Weight: 2}}}
	l = newExplainLog(env, s, other, 42, c)
	y := &policy.Explanation{Scorers: []policy.Weighted{{Name: "fgd", Weight: 1}, {Name: "pwr", Weight: 2}},
		Nodes: []policy.NodeScore{{Node: 0, Rank: 1, Raw: []int64{7, -270}, Score: []int64{7, 100}, Total: 207}}, Feasible: 1}
	l.record(0, &job.Task{ID: 0, Name: "p"}, y)
	res = &experiment.Results{Files: map[string][]byte{}}
	addExplain(res, s, []*explainLog{l}, false)
	if got, want := string(res.Files[ExplainFile]), "P with gate,42,0.000,0,p,1,a,T4,207,-270,100,200,1,\n"; !strings.HasSuffix(got, want) {
		t.Errorf("explain.csv:\n%s\nwant it to end with:\n%s", got, want)
	}

	// Without --explain: no log, no file, no line.
	if newExplainLog(&experiment.Env{}, s, &s.Policies[0], 42, c) != nil {
		t.Errorf("a log without --explain")
	}
	res = &experiment.Results{Files: map[string][]byte{}}
	addExplain(res, s, []*explainLog{nil}, false)
	if len(res.Files) != 0 || len(res.Tail) != 0 {
		t.Errorf("without --explain: files %v, tail %q", res.Files, res.Tail)
	}
}
