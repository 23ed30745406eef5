package eaco

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/sim"
)

// TestHistoryLearns: in the primary setting EaCO's H is not the engine's
// truth, so its predictions miss (optimistic where the set oversubscribes
// the GPU) and observe-and-undo acts; given the truth as H, exact
// observations and each job's own length (the setting before), it never
// undoes.
func TestHistoryLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("5 runs of 1,000 jobs")
	}
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	set, _ := e.Setting(InterfPaper)
	oracle := set
	oracle.History = func() *coloc.History { return coloc.NewModelHistory(set.Truth) }
	oracle.ObsNoise, oracle.EacoArgs = 0, ""
	// H = truth with lengths predicted: what the lengths alone change.
	truthH := oracle
	truthH.EacoArgs = set.EacoArgs
	var truthUndos, truthMisses int
	var undos, oracleUndos, opt, joins, misses, missesNoUndo, oracleMisses int
	var mape, lost, energy, energyNoUndo float64
	for seed := uint64(1); seed <= 5; seed++ {
		load := e.WorkloadFor(set, seed, DefaultJobs, DefaultPerHour)
		r, err := e.RunIn(set, builtin.Registries(), "eaco", nil, 28, seed, load, false)
		if err != nil {
			t.Fatal(err)
		}
		o, err := e.RunIn(oracle, builtin.Registries(), "eaco", nil, 28, seed, load, false)
		if err != nil {
			t.Fatal(err)
		}
		th, err := e.RunIn(truthH, builtin.Registries(), "eaco", nil, 28, seed, load, false)
		if err != nil {
			t.Fatal(err)
		}
		truthUndos, truthMisses = truthUndos+th.Undone, truthMisses+th.Res.DeadlineMisses
		n, err := e.RunIn(set, builtin.Registries(), "eaco", []byte("undo: false"), 28, seed, load, false)
		if err != nil {
			t.Fatal(err)
		}
		if n.Undone != 0 || n.Res.Undos != 0 {
			t.Errorf("seed %d: undo off, %d undos", seed, n.Undone)
		}
		misses, missesNoUndo = misses+r.Res.DeadlineMisses, missesNoUndo+n.Res.DeadlineMisses
		lost, energy, energyNoUndo = lost+r.Res.LostSteps, energy+float64(r.Res.Energy), energyNoUndo+float64(n.Res.Energy)
		undos, oracleUndos, oracleMisses = undos+r.Undone, oracleUndos+o.Undone, oracleMisses+o.Res.DeadlineMisses
		opt, joins, mape = opt+r.Pred.Optimistic, joins+r.Pred.Joins, mape+r.Pred.FactorMAPE
		// H = truth errs only where a recorded window saw its set change.
		if !(o.Pred.FactorMAPE < r.Pred.FactorMAPE/5) {
			t.Errorf("seed %d: H = truth predicts with error %.3g%%, learning H %.3g%%: want the truth 5x closer", seed, o.Pred.FactorMAPE, r.Pred.FactorMAPE)
		}
		if r.Pred.Lengths == 0 || !(r.Pred.LengthMAPE > 0) {
			t.Errorf("seed %d: %d length predictions, error %v: lengths are not predicted", seed, r.Pred.Lengths, r.Pred.LengthMAPE)
		}
	}
	t.Logf("28 nodes, seeds 1-5: %d joins, %d predicted optimistic, factor MAPE %.2f%% (mean over seeds), %d undos; H = truth, lengths given: %d undos, %d misses", joins, opt, mape/5, undos, oracleUndos, oracleMisses)
	t.Logf("H = truth, lengths predicted: %d undos, %d misses", truthUndos, truthMisses)
	t.Logf("undo on: %d deadline misses, %.0f steps lost, %.4f MWh; undo off: %d misses, %.4f MWh", misses, lost, energy/3.6e9, missesNoUndo, energyNoUndo/3.6e9)
	if undos == 0 || opt == 0 {
		t.Errorf("learning H: %d undos, %d optimistic predictions: want both > 0", undos, opt)
	}
	if oracleUndos != 0 {
		t.Errorf("H = truth: %d undos, want 0", oracleUndos)
	}
}

// TestWorkloadScales: the primary setting's workload has multi-GPU jobs
// near Gavel's msr proportions; the other setting's is single-GPU.
func TestWorkloadScales(t *testing.T) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	set, _ := e.Setting(InterfPaper)
	t.Logf("pool: %d jobs, median %.2f h alone; by GPU count: 1: %d, 2: %d, 4: %d, 8: %d", len(e.Pool), e.PriorH, len(e.ByScale[1]), len(e.ByScale[2]), len(e.ByScale[4]), len(e.ByScale[8]))
	count := map[int]int{}
	jobs := e.WorkloadFor(set, 1, 4000, 24)
	for _, j := range jobs {
		count[j.Key.Scale]++
		if r := e.Multi.Isolated[j.Key]; j.IsoRate != r || !(r > 0) {
			t.Fatalf("job %d on %d GPUs: isolated rate %v, table %v", j.ID, j.Key.Scale, j.IsoRate, r)
		}
	}
	for _, sc := range ScaleCounts { // 4,000 draws: within 2 points of the trace's shares
		if got, want := float64(count[sc[0]])/4000, float64(sc[1])/14903; math.Abs(got-want) > 0.02 {
			t.Errorf("%d GPUs: %.3f of jobs, trace %.3f", sc[0], got, want)
		}
	}
	g, _ := e.Setting(InterfGavel)
	for _, j := range e.WorkloadFor(g, 1, 500, 24) {
		if j.Key.Scale != 1 {
			t.Fatalf("Gavel setting: job %d on %d GPUs", j.ID, j.Key.Scale)
		}
	}
}

// TestBelowNeedsSign: "X below Y by p%" holds within the tolerance only
// for a reduction: the paper's 4% never passes at -0.4%.
func TestBelowNeedsSign(t *testing.T) {
	for _, c := range []struct {
		paper, measured float64
		want            bool
	}{{4, -0.4, false}, {4, 0, false}, {4, 0.04, false}, {4, 0.1, true}, {4, 9, true}, {4, 9.1, false}, {39, 34.5, true}, {39, math.NaN(), false}} {
		if got := belowCheck(c.paper).Holds(c.measured); got != c.want {
			t.Errorf("paper %v, measured %v: holds %v, want %v", c.paper, c.measured, got, c.want)
		}
	}
	// One measured figure against one paper figure is one claim.
	g := splitByPaper([]string{"FIFO", "FIFO_packed", "Gandiva"}, map[string]float64{"FIFO": 39, "FIFO_packed": 39, "Gandiva": 8.3})
	if len(g) != 2 || len(g[0]) != 2 || g[1][0] != "Gandiva" {
		t.Errorf("groups %v, want [[FIFO FIFO_packed] [Gandiva]]", g)
	}
}

// TestSameRunsOneClaim: baselines whose runs give the same figure on every
// seed share one claim; one seed apart keeps them apart.
func TestSameRunsOneClaim(t *testing.T) {
	rep := &Reproduction{Options: Options{Seeds: 2}}
	// Energy per (cluster, variant, seed): FIFO and FIFO_packed equal on
	// both seeds at 28 nodes, Gandiva equal on seed 1 only.
	e := map[string][2]float64{"FIFO": {10, 20}, "FIFO_packed": {10, 20}, "Gandiva": {10, 21}}
	for range Clusters {
		for _, v := range Variants {
			for s := range 2 {
				x := e[v.Label][s]
				rep.Runs = append(rep.Runs, &Run{Res: &sim.ColocResult{Energy: hw.Joules(x)}})
			}
		}
	}
	got := rep.sameRuns(28, []string{"FIFO", "FIFO_packed", "Gandiva"}, energy)
	if len(got) != 2 || len(got[0]) != 2 || got[0][1] != "FIFO_packed" || got[1][0] != "Gandiva" {
		t.Errorf("groups %v, want [[FIFO FIFO_packed] [Gandiva]]", got)
	}
}
