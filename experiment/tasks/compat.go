package tasks

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	randv1 "math/rand"
	"slices"
	"sort"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/sim"
)

// FGDSimSequence reproduces the task sequence and node renaming of the
// public FGD simulator (github.com/hkust-adsl/kubernetes-scheduler-simulator,
// run with --shuffle-pod=true and workload tuning ratio target) from its
// global math/rand (v1) stream seeded with seed:
//
//  1. one Int draw (the simulator logs it);
//  2. the pods sorted by name are shuffled;
//  3. clones are drawn with Intn(len(pods)) from the name-sorted pods and
//     appended until the stop test fires; the stop test adds the drawn pod's
//     per-GPU milli (not its total) to the requested total, as coded there,
//     and the pod that trips it is dropped;
//  4. the scheduler starts its informers, and each of their reflectors
//     draws one Float64 from the global source for its watch timeout
//     (client-go reflector.go): fgdSimInformerDraws draws;
//  5. Perm(len(nodes)) over the name-sorted nodes gives each node a 4-digit
//     prefix; among equal top scores the node with the lexicographically
//     smallest renamed name, i.e. the smallest prefix, wins (the
//     simulator's kube-scheduler fork patches selectHost that way).
//
// It returns the sequence and each node's tie-break rank (node ID order).
func FGDSimSequence(pods []job.Task, nodeNames []string, capacityMilli int64, target float64, seed int64) ([]job.Task, []int) {
	r := randv1.New(randv1.NewSource(seed))
	r.Int()
	byName := make([]job.Task, len(pods))
	copy(byName, pods)
	sort.Slice(byName, func(i, j int) bool { return byName[i].Name < byName[j].Name })
	seq := make([]job.Task, len(byName))
	copy(seq, byName)
	r.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	var total int64
	for _, p := range seq {
		total += p.TotalGPUMilli()
	}
	limit := target * float64(capacityMilli)
	for {
		p := byName[r.Intn(len(byName))]
		if float64(total+p.GPUMilli) > limit {
			break
		}
		total += p.TotalGPUMilli()
		seq = append(seq, p)
	}
	for i := range seq {
		seq[i].ID = job.ID(i)
	}
	order := make([]int, len(nodeNames))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return nodeNames[order[a]] < nodeNames[order[b]] })
	for i := 0; i < fgdSimInformerDraws; i++ {
		r.Float64()
	}
	perm := r.Perm(len(nodeNames))
	rank := make([]int, len(nodeNames))
	for i, id := range order {
		rank[id] = perm[i]
	}
	return seq, rank
}

// fgdSimInformerDraws is the number of global-rand draws the FGD
// simulator's informers make between the workload tuning and the node
// renaming. Ten is the only count in 0..30 for which seeds 42, 43 and 44
// reproduce the simulator's published curves exactly; it matches one
// reflector per informer the simulator's scheduler starts.
const fgdSimInformerDraws = 10

// FGDSimPercents is the number of integer percents the FGD simulator's
// analysis reports (0..130).
const FGDSimPercents = 131

// FGDSimAllocCurve reduces per-arrival samples the way the FGD simulator's
// analysis (experiments/analysis/merge_alloc_discrete*.py) does: each
// arrival's requested GPUs as a percentage of the cluster is rounded to an
// integer (half to even), its allocated percentage to two decimals; the value
// at percent k is the mean allocated percentage of the arrivals rounded to
// k (of those rounded to k-1..k+1 when none), with NumPy's pairwise
// summation, rounded to two decimals by NumPy's round. Percents with no
// arrival nearby are NaN.
func FGDSimAllocCurve(samples []sim.Sample, totalGPUs int64) []float64 {
	arr := make([]float64, len(samples))
	alloc := make([]float64, len(samples))
	for i, s := range samples {
		arr[i] = math.RoundToEven(float64(s.ArrivedGPUMilli) / float64(totalGPUs) / 10)
		alloc[i] = pyRound2(float64(s.AllocGPUMilli) / float64(totalGPUs) / 10)
	}
	out := make([]float64, FGDSimPercents)
	var sel []float64
	for k := range out {
		kk := float64(k)
		sel = sel[:0]
		for i, a := range arr {
			if a == kk {
				sel = append(sel, alloc[i])
			}
		}
		if len(sel) == 0 {
			for i, a := range arr {
				if a >= kk-1 && a <= kk+1 {
					sel = append(sel, alloc[i])
				}
			}
		}
		if len(sel) == 0 {
			out[k] = math.NaN()
			continue
		}
		mean := pairwiseSum(sel) / float64(len(sel))
		out[k] = math.RoundToEven(mean*100) / 100
	}
	return out
}

// pyRound2 is Python's round(x, 2): the correctly rounded decimal.
func pyRound2(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	return v
}

// pairwiseSum is NumPy's pairwise summation of a contiguous float64 array.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

//go:embed data/fgdsim_expected_default_fgd.csv
var fgdSimExpected []byte

// FGDSimPublished returns the FGD simulator's published allocation curves
// for FGD on the Default trace (tuning ratio 1.3), by seed (42..51).
func FGDSimPublished() (map[uint64][]float64, error) {
	rows, err := csv.NewReader(bytes.NewReader(fgdSimExpected)).ReadAll()
	if err != nil {
		return nil, err
	}
	out := map[uint64][]float64{}
	for i, r := range rows[1:] {
		if len(r) != 5+FGDSimPercents {
			return nil, fmt.Errorf("fgdsim expected results row %d: %d fields", i+2, len(r))
		}
		seed, err := strconv.ParseUint(r[3], 10, 64)
		if err != nil {
			return nil, err
		}
		v := make([]float64, FGDSimPercents)
		for k, s := range r[5:] {
			if v[k], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("fgdsim expected results row %d: %w", i+2, err)
			}
		}
		out[seed] = v
	}
	return out, nil
}

// CompareFGDSim compares the mean FGD allocation curve of the runs (in the
// simulator's reduction) with the simulator's published mean over its seeds.
func CompareFGDSim(r *InflationResult) (*FGDSimCompare, error) {
	ref := r.Scenario.ReferencePolicy()
	runs := r.RunsOf(ref)
	// The published curves are FGD's on the Default trace and the 1213-node
	// GPU cluster to 1.3x: any other cluster or trace has nothing to match.
	if ref == "" || len(runs) == 0 || r.Scenario.Trace.Pods != "default" || r.Scenario.Trace.Nodes != "openb-gpu" || r.Scenario.Target != 1.3 {
		return nil, nil
	}
	pub, err := FGDSimPublished()
	if err != nil {
		return nil, err
	}
	worst, at := 0.0, 0
	for k := 0; k < FGDSimPercents; k++ {
		var got, want float64
		for _, run := range runs {
			got += run.FGDSimAlloc[k] / float64(len(runs))
		}
		for _, seed := range slices.Sorted(maps.Keys(pub)) {
			want += pub[seed][k] / float64(len(pub))
		}
		if d := math.Abs(got - want); d > worst {
			worst, at = d, k
		}
	}
	return &FGDSimCompare{Note: fmt.Sprintf("FGD, %d seeds here vs the FGD simulator's published seeds 42-51: mean allocated-GPU %% at each requested %% (0..130)", len(runs)),
		MaxAbsDiff: experiment.Num(worst), AtPercent: at}, nil
}
