// Package cedla implements CE-DLA (Kang, Lee and Kim, Energies 2022,
// "Cost Efficient GPU Cluster Management for Training and Inference of Deep
// Learning"): per 15-minute slot, which training jobs run on which node
// type, how the inference load is spread, and how many nodes are on, so
// that the electricity cost plus the restart and turn-on costs is least
// (Problem 1: deadlines and latency bounds hard; Problem 2: violations
// penalised), as a mixed-integer linear program solved over a rolling
// horizon. Nodes of one type are identical, so the program counts nodes
// per type instead of naming them (docs/policies/cedla.md).
package cedla

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/solver"
)

// Name is the policy's name.
const Name = "cedla"

// Mode chooses the paper's problem.
type Mode string

// The problems.
const (
	Hard Mode = "hard" // Problem 1
	Soft Mode = "soft" // Problem 2
)

// Args configures CE-DLA.
type Args struct {
	Mode Mode `yaml:"mode"`
	// LatePenalty is O^T: USD per slot a job runs after its deadline,
	// times how late that slot is (Problem 2).
	LatePenalty float64 `yaml:"late_penalty_usd"`
	// LateAllowance is how long past its deadline Problem 2 may run a
	// job, as a fraction of the job's window (deadline - arrival + 1).
	LateAllowance float64 `yaml:"late_allowance"`
	// LatencyPenalty is O^I: USD per request/s above a node type's
	// latency-bound capacity, per slot.
	LatencyPenalty float64 `yaml:"latency_penalty_usd"`
	// HardLatencyPenalty replaces LatencyPenalty in Problem 1: inference is
	// never rejected (paper Sec. 3.3), so when it alone exceeds the
	// latency-bound capacity of the whole cluster the bound gives way, by
	// at most that unavoidable excess (computed before the training rows),
	// at this price; when inference alone fits, eq. 29 is hard.
	HardLatencyPenalty float64 `yaml:"hard_latency_penalty_usd"`
	// BinarySlots is how many leading slots of the window keep binary
	// training placements; later slots are relaxed to [0, 1] (relax and
	// fix: only the leading slots are applied before the next plan). 0:
	// every slot binary, the exact Problem 1 or 2 over the window.
	BinarySlots int `yaml:"binary_slots"`
	// BlockSlots, when > 0, merges the relaxed slots after the first
	// max(BinarySlots, BlockAfter) into blocks of this many slots: one set
	// of columns per block (summed cost, mean load), so the far part of
	// the window, which is re-planned before it is applied, costs fewer
	// columns. 0: one period per slot.
	BlockSlots int `yaml:"block_slots"`
	// BlockAfter is how many leading slots of the window stay one period
	// each when BlockSlots is set (at least BinarySlots).
	BlockAfter int `yaml:"block_after_slots"`
	// RelGap is the relative gap at which a plan is accepted: the
	// heuristic's plan when it is within RelGap of the LP relaxation's
	// bound, else the MIP solve's when HiGHS proves it within RelGap.
	RelGap float64 `yaml:"rel_gap"`
	// MaxNodes bounds the branch-and-bound nodes of a MIP solve (0: no
	// bound); a solve it stops keeps its incumbent, whose gap the plan's
	// statistics show. A deterministic limit: the same plan on any machine.
	MaxNodes int `yaml:"max_nodes"`
	// SafetyNet is the wall-clock time one solve may take before the run
	// fails with an error naming the slot (never a different plan): no
	// result depends on it.
	SafetyNet time.Duration `yaml:"safety_net"`
	Threads   int           `yaml:"threads"`
}

// Default is Problem 2 with the penalties of docs/policies/cedla.md, a
// 1% gap, no node bound and a 10-minute safety net per solve.
func (Args) Default() Args {
	return Args{Mode: Soft, LatePenalty: 0.5, LateAllowance: 0.5, LatencyPenalty: 0.01, HardLatencyPenalty: 10,
		RelGap: 0.01, SafetyNet: 10 * time.Minute, Threads: 1}
}

// MaxPenaltyUSD bounds each penalty: a million dollars per slot (or per
// request/s per slot) is far past any price of energy a plan weighs it
// against, and the MILP's coefficients stay where the solver is exact
// (late_penalty_usd: 1e308 made the objective infinite and failed the run
// at slot 10, issue 40).
const MaxPenaltyUSD = 1e6

// Validate names bad fields.
func (a Args) Validate() error {
	switch {
	case a.Mode != Hard && a.Mode != Soft:
		return fmt.Errorf("cedla.mode: %q, want %q or %q", a.Mode, Hard, Soft)
	case !(a.LatePenalty > 0 && a.LatePenalty <= MaxPenaltyUSD):
		return fmt.Errorf("cedla.late_penalty_usd: %v, want (0, %g] USD", a.LatePenalty, MaxPenaltyUSD)
	case !(a.LateAllowance >= 0) || math.IsInf(a.LateAllowance, 0):
		return fmt.Errorf("cedla.late_allowance: %v, want >= 0", a.LateAllowance)
	case !(a.LatencyPenalty > 0 && a.LatencyPenalty <= MaxPenaltyUSD):
		return fmt.Errorf("cedla.latency_penalty_usd: %v, want (0, %g] USD", a.LatencyPenalty, MaxPenaltyUSD)
	case !(a.HardLatencyPenalty > 0 && a.HardLatencyPenalty <= MaxPenaltyUSD):
		return fmt.Errorf("cedla.hard_latency_penalty_usd: %v, want (0, %g] USD", a.HardLatencyPenalty, MaxPenaltyUSD)
	case a.BinarySlots < 0:
		return fmt.Errorf("cedla.binary_slots: %d, want >= 0", a.BinarySlots)
	case a.BlockSlots < 0:
		return fmt.Errorf("cedla.block_slots: %d, want >= 0", a.BlockSlots)
	case a.BlockAfter < 0:
		return fmt.Errorf("cedla.block_after_slots: %d, want >= 0", a.BlockAfter)
	case a.BlockSlots > 0 && a.BinarySlots == 0:
		return fmt.Errorf("cedla.block_slots: %d needs binary_slots > 0 (the exact problem has one period per slot)", a.BlockSlots)
	case a.SafetyNet <= 0:
		return fmt.Errorf("cedla.safety_net: %v, want > 0", a.SafetyNet)
	case a.MaxNodes < 0:
		return fmt.Errorf("cedla.max_nodes: %d, want >= 0", a.MaxNodes)
	case !(a.RelGap >= 0 && a.RelGap < 1):
		return fmt.Errorf("cedla.rel_gap: %v, want [0, 1)", a.RelGap)
	case a.Threads < 0:
		return fmt.Errorf("cedla.threads: %d", a.Threads)
	}
	return nil
}

// Policy is a CE-DLA planner.
type Policy struct {
	a Args
	s solver.Solver
	// RestartSeconds is the progress a (re)start loses (the engine's
	// SlotTruth.RestartSeconds, known from measurement).
	RestartSeconds float64
	// Log, when not nil, receives the solver's log of every solve.
	Log io.Writer
	// late holds, while Plan makes a plan, the admitted jobs whose
	// deadline the plan cannot keep: their deadline rows are soft
	// (lastSlot and build).
	late map[int]bool
}

var _ policy.SlotPlanner = (*Policy)(nil)

// New returns a CE-DLA planner solving with s.
func New(a Args, s solver.Solver, restartSeconds float64) (*Policy, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("cedla: no solver")
	}
	return &Policy{a: a, s: s, RestartSeconds: restartSeconds}, nil
}

// cols are the program's columns for one plan, per period of the window
// (periods: one slot each, or blocks of relaxed slots; see periods).
type cols struct {
	per  []period
	of   []int                 // period of each slot of the window
	x, z map[[3]int]solver.Var // (job index, type, period)
	n    [][][]solver.Var      // [i][t][period]
	lam  [][][]solver.Var
	v    [][][]solver.Var // latency excess (-1: none)
	s    [][]solver.Var   // [t][period]
	r    []solver.Var     // rejection of job k (only in the rejection solve)
}

// period is a run of slots of the window that the program plans as one:
// slots start .. start+n-1 (relative to the plan's first slot).
type period struct{ start, n int }

// Periods is how many periods a window of h slots has (periods): the
// program's size follows it (memory estimates).
func (a Args) Periods(h int) int {
	per, _ := a.periods(h)
	return len(per)
}

// periods splits a window of h slots: the first max(BinarySlots,
// BlockAfter) one slot each, the rest in blocks of BlockSlots (the last
// block may be shorter); without BlockSlots every slot is a period. It returns the periods and
// each slot's period.
func (a Args) periods(h int) ([]period, []int) {
	var per []period
	of := make([]int, h)
	for tau := 0; tau < h; {
		n := 1
		if a.BlockSlots > 0 && tau >= max(a.BinarySlots, a.BlockAfter) {
			n = min(a.BlockSlots, h-tau)
		}
		for k := tau; k < tau+n; k++ {
			of[k] = len(per)
		}
		per = append(per, period{tau, n})
		tau += n
	}
	return per, of
}

// build writes Problem 1 or 2 for st. With reject, every job may be
// rejected (r_k = 1 drops its progress row) and the objective is the
// priority-weighted count of rejections. fix holds training placements
// (job index, type, period) fixed to a value; relax makes every training
// placement continuous (the LP relaxation; the rejection columns stay
// binary).
//
// In Problem 1 excess[q] (from inferenceExcess, computed before any
// training row) caps the latency excess of period q: zero when inference
// alone fits within the bound, so eq. 29 is hard for the admitted set;
// nil in Problem 2, where the excess is priced (O^I).
func (p *Policy) build(st *policy.SlotState, jobs []policy.SlotJobState, reject bool, fix map[[3]int]float64, excess []float64, relax bool) (*solver.Model, *cols) {
	m := st.Models
	nm, nt, H := len(m.Models), len(m.Types), len(st.Price)
	md := solver.NewModel(fmt.Sprintf("cedla-%s-slot%d", p.a.Mode, st.Slot))
	per, of := p.a.periods(H)
	P := len(per)
	c := &cols{per: per, of: of, x: map[[3]int]solver.Var{}, z: map[[3]int]solver.Var{}}
	// cost is the USD of w watts over slots from .. to-1 of the window.
	cost := func(from, to int, w float64) float64 {
		if reject {
			return 0
		}
		var usd float64
		for tau := from; tau < to; tau++ {
			usd += w * policy.SlotSeconds / 3.6e9 * st.Price[tau]
		}
		return usd
	}
	restartFrac := p.RestartSeconds / policy.SlotSeconds
	// rejectW outweighs rejecting every job not yet admitted.
	rejectW := 1.0
	for _, j := range jobs {
		if !j.Admitted {
			rejectW += float64(1 + j.Priority)
		}
	}
	// Per type and period: the busy terms, for the capacity rows.
	busy := make([][][]solver.Term, nt)
	for t := range nt {
		busy[t] = make([][]solver.Term, P)
	}
	for k, j := range jobs {
		last := p.lastSlot(j)
		end := min(last-st.Slot, H-1) // last tau the job may use
		var progress []solver.Term
		maxRate := 0.0
		meanRate := 0.0
		for t := range nt {
			maxRate = math.Max(maxRate, m.Epochs[j.Model][t])
			meanRate += m.Epochs[j.Model][t] / float64(nt)
		}
		for q := 0; q < P && per[q].start <= end; q++ {
			// A period the job may use only in part (its last slot falls
			// inside it): x is the share of the period it runs, its
			// progress and cost count the usable slots, its node is busy
			// for that share of the usable slots.
			from, to := per[q].start, min(per[q].start+per[q].n, end+1)
			usable := float64(to - from)
			h := st.Slot + from
			one := make([]solver.Term, 0, nt)
			for t := range nt {
				obj := cost(from, to, float64(m.TrainW[j.Model][t]-m.Types[t].Idle))
				if !reject {
					for hh := st.Slot + from; hh < st.Slot+to; hh++ {
						if hh > j.Deadline {
							obj += p.a.LatePenalty * float64(hh-j.Deadline)
						}
					}
				}
				lo, hi := 0.0, 1.0
				if v, ok := fix[[3]int{k, t, q}]; ok {
					lo, hi = v, v
				}
				kind := solver.Binary
				if relax || p.a.BinarySlots > 0 && from >= p.a.BinarySlots {
					kind = solver.Continuous
				}
				x := md.AddVar(fmt.Sprintf("x_j%d_t%d_h%d", j.ID, t, h), lo, hi, obj, kind)
				z := md.AddVar(fmt.Sprintf("z_j%d_t%d_h%d", j.ID, t, h), 0, 1, map[bool]float64{true: 0, false: m.Restart}[reject], solver.Continuous)
				c.x[[3]int{k, t, q}], c.z[[3]int{k, t, q}] = x, z
				// z >= x(h) - x(h-1): the max() of eq. 15.
				if q == 0 {
					prev := 0.0
					if j.LastType == t {
						prev = 1
					}
					md.AddRow(fmt.Sprintf("restart_j%d_t%d_h%d", j.ID, t, h), -prev, math.Inf(1), solver.Term{Var: z, Coef: 1}, solver.Term{Var: x, Coef: -1})
				} else {
					md.AddRow(fmt.Sprintf("restart_j%d_t%d_h%d", j.ID, t, h), 0, math.Inf(1), solver.Term{Var: z, Coef: 1}, solver.Term{Var: x, Coef: -1}, solver.Term{Var: c.x[[3]int{k, t, q - 1}], Coef: 1})
				}
				e := m.Epochs[j.Model][t]
				progress = append(progress, solver.Term{Var: x, Coef: e * usable}, solver.Term{Var: z, Coef: -e * restartFrac})
				one = append(one, solver.Term{Var: x, Coef: 1})
				busy[t][q] = append(busy[t][q], solver.Term{Var: x, Coef: usable / float64(per[q].n)})
			}
			md.AddRow(fmt.Sprintf("onenode_j%d_h%d", j.ID, h), math.Inf(-1), 1, one...)
		}
		// Eq. 27 over the window: what the slots after the window cannot
		// do at the mean rate must be done in it; never more than the
		// window can do.
		// (Up to the deadline only: Problem 2's slots past it are a
		// penalised last resort, not capacity to count on.)
		after := math.Max(float64(j.Deadline-(st.Slot+H-1)), 0)
		need := math.Max(j.Remaining-after*meanRate, 0)
		need = math.Min(need, float64(end+1)*maxRate*(1-restartFrac)*0.999)
		if end < 0 {
			need = 0
		}
		switch {
		case need > 0 && reject && p.late[j.ID]:
			// Already soft: the rejection problem leaves it out.
			c.r = append(c.r, -1)
		case need > 0:
			if reject {
				// A new job is rejected; an admitted one never is, its row
				// is made soft instead, last of all (weight rejectW).
				w := float64(1 + j.Priority)
				if j.Admitted {
					w *= rejectW
				}
				r := md.AddVar(fmt.Sprintf("r_j%d", j.ID), 0, 1, w, solver.Binary)
				c.r = append(c.r, r)
				progress = append(progress, solver.Term{Var: r, Coef: need})
			} else if p.late[j.ID] {
				// A soft deadline row: work left undone in the window, in
				// slots of the fastest node (scaled like x, so the program
				// stays well conditioned), costs as much per slot as a slot
				// run at the window's end, late by its length (LatePenalty
				// x H).
				sl := md.AddVar(fmt.Sprintf("short_j%d", j.ID), 0, need/maxRate, p.a.LatePenalty*float64(H), solver.Continuous)
				progress = append(progress, solver.Term{Var: sl, Coef: maxRate})
			}
			md.AddRow(fmt.Sprintf("epochs_j%d", j.ID), need, math.Inf(1), progress...)
		case reject:
			c.r = append(c.r, -1)
		}
	}
	if reject && len(c.r) < len(jobs) {
		for len(c.r) < len(jobs) {
			c.r = append(c.r, -1)
		}
	}
	latPen := p.a.LatencyPenalty
	if p.a.Mode == Hard {
		latPen = p.a.HardLatencyPenalty
	}
	c.n, c.lam, c.v = make([][][]solver.Var, nm), make([][][]solver.Var, nm), make([][][]solver.Var, nm)
	for i := range nm {
		c.n[i], c.lam[i], c.v[i] = make([][]solver.Var, nt), make([][]solver.Var, nt), make([][]solver.Var, nt)
		for t := range nt {
			c.n[i][t], c.lam[i][t], c.v[i][t] = make([]solver.Var, P), make([]solver.Var, P), make([]solver.Var, P)
			cnt := float64(m.Types[t].Count)
			for q, pq := range per {
				from, to := pq.start, pq.start+pq.n
				h := st.Slot + from
				n := md.AddVar(fmt.Sprintf("n_i%d_t%d_h%d", i, t, h), 0, cnt, cost(from, to, m.InferBaseW[i][t]-float64(m.Types[t].Idle)), solver.Continuous)
				lam := md.AddVar(fmt.Sprintf("lambda_i%d_t%d_h%d", i, t, h), 0, math.Inf(1), cost(from, to, m.InferPerReqW[i][t]), solver.Continuous)
				vobj := latPen * float64(pq.n)
				if reject {
					vobj = 0
				}
				v := md.AddVar(fmt.Sprintf("v_i%d_t%d_h%d", i, t, h), 0, math.Inf(1), vobj, solver.Continuous)
				c.n[i][t][q], c.lam[i][t][q], c.v[i][t][q] = n, lam, v
				// Eq. 29 per node, summed over the n nodes that share the
				// load evenly: lambda <= cap * n (+ v, the excess).
				md.AddRow(fmt.Sprintf("latency_i%d_t%d_h%d", i, t, h), math.Inf(-1), 0, solver.Term{Var: lam, Coef: 1}, solver.Term{Var: n, Coef: -m.Cap(i, t)}, solver.Term{Var: v, Coef: -1})
				// Stability: the queue must drain (lambda <= 0.95 mu per
				// node); only when the cluster cannot, the excess w is
				// allowed at ten times the latency penalty.
				wv := md.AddVar(fmt.Sprintf("w_i%d_t%d_h%d", i, t, h), 0, math.Inf(1), 10*vobj, solver.Continuous)
				md.AddRow(fmt.Sprintf("stable_i%d_t%d_h%d", i, t, h), math.Inf(-1), 0, solver.Term{Var: lam, Coef: 1}, solver.Term{Var: n, Coef: -0.95 * m.Mu[i][t]}, solver.Term{Var: wv, Coef: -1})
				busy[t][q] = append(busy[t][q], solver.Term{Var: n, Coef: 1})
			}
		}
		for q, pq := range per {
			terms := make([]solver.Term, nt)
			for t := range nt {
				terms[t] = solver.Term{Var: c.lam[i][t][q], Coef: 1}
			}
			// Eq. 24: all of L_i(h) is served (a block: its mean load).
			load := periodLoad(st, pq, i)
			md.AddRow(fmt.Sprintf("load_i%d_h%d", i, st.Slot+pq.start), load, load, terms...)
		}
	}
	if excess != nil {
		// Problem 1, eq. 29 hard: the latency excess of a period may not
		// exceed what inference alone cannot avoid (zero when it fits), so
		// training never takes nodes that inference needs within its bound.
		for q, pq := range per {
			var terms []solver.Term
			for i := range nm {
				for t := range nt {
					terms = append(terms, solver.Term{Var: c.v[i][t][q], Coef: 1})
				}
			}
			md.AddRow(fmt.Sprintf("latency_hard_h%d", st.Slot+pq.start), math.Inf(-1), excess[q]*(1+1e-7)+1e-7, terms...)
		}
	}
	c.s = make([][]solver.Var, nt)
	for t := range nt {
		c.s[t] = make([]solver.Var, P)
		cnt := float64(m.Types[t].Count)
		for q, pq := range per {
			h := st.Slot + pq.start
			// Node counts are continuous in the program and rounded up in
			// the plan (decisions repairs a type that rounding overfills).
			s := md.AddVar(fmt.Sprintf("s_t%d_h%d", t, h), 0, cnt, cost(pq.start, pq.start+pq.n, float64(m.Types[t].Idle)), solver.Continuous)
			c.s[t][q] = s
			// Eqs. 20-22, 25 per type: busy nodes are on, one job or one
			// model per node.
			md.AddRow(fmt.Sprintf("capacity_t%d_h%d", t, h), math.Inf(-1), 0, append(slices.Clone(busy[t][q]), solver.Term{Var: s, Coef: -1})...)
			// u >= s(h) - s(h-1): the max() of eq. 16.
			u := md.AddVar(fmt.Sprintf("u_t%d_h%d", t, h), 0, math.Inf(1), map[bool]float64{true: 0, false: m.TurnOn}[reject], solver.Continuous)
			if q == 0 {
				md.AddRow(fmt.Sprintf("turnon_t%d_h%d", t, h), -float64(st.On[t]), math.Inf(1), solver.Term{Var: u, Coef: 1}, solver.Term{Var: s, Coef: -1})
			} else {
				md.AddRow(fmt.Sprintf("turnon_t%d_h%d", t, h), 0, math.Inf(1), solver.Term{Var: u, Coef: 1}, solver.Term{Var: s, Coef: -1}, solver.Term{Var: c.s[t][q-1], Coef: 1})
			}
		}
	}
	return md, c
}

// periodLoad is model i's load (requests/s) in period pq: the mean over
// its slots.
func periodLoad(st *policy.SlotState, pq period, i int) float64 {
	var load float64
	for tau := pq.start; tau < pq.start+pq.n; tau++ {
		load += st.Load[tau][i]
	}
	return load / float64(pq.n)
}

// inferenceExcess is, per period of st's window, the least latency excess
// (requests/s above the latency-bound capacity of eq. 29, summed over the
// models) that inference alone leaves with every node of the cluster
// serving it: 0 when the load fits within the bound. It is computed before
// any training row: a greedy placement (each model onto the types where a
// node takes the most within the bound) that places everything proves 0;
// the other periods get the least excess from a linear program (lambda <=
// cap n + v, sum_i n <= nodes of the type, sum_t lambda = L_i; minimise
// the sum of v). It returns the excess and adds the solve to info.
func (p *Policy) inferenceExcess(st *policy.SlotState, opts solver.Options, info *policy.PlanInfo) ([]float64, error) {
	m := st.Models
	nm, nt := len(m.Models), len(m.Types)
	per, _ := p.a.periods(len(st.Price))
	excess := make([]float64, len(per))
	var open []int // periods the greedy placement does not prove
	for q, pq := range per {
		left := make([]int, nt)
		for t := range nt {
			left[t] = m.Types[t].Count
		}
		fits := true
		for i := range nm {
			need := periodLoad(st, pq, i)
			order := make([]int, nt)
			for t := range order {
				order[t] = t
			}
			slices.SortStableFunc(order, func(a, b int) int {
				switch ca, cb := m.Cap(i, a), m.Cap(i, b); {
				case ca > cb:
					return -1
				case ca < cb:
					return 1
				}
				return 0
			})
			for _, t := range order {
				c := m.Cap(i, t)
				if need <= 1e-9 || c <= 0 {
					continue
				}
				k := min(int(math.Ceil(need/c-1e-9)), left[t])
				left[t] -= k
				need -= float64(k) * c
			}
			if need > 1e-9 {
				fits = false
				break
			}
		}
		if !fits {
			open = append(open, q)
		}
	}
	if len(open) == 0 {
		return excess, nil
	}
	md := solver.NewModel(fmt.Sprintf("cedla-inference-excess-slot%d", st.Slot))
	vs := make([][]solver.Var, len(open))
	for k, q := range open {
		h := st.Slot + per[q].start
		n := make([][]solver.Var, nm)
		lam := make([][]solver.Var, nm)
		for i := range nm {
			n[i], lam[i] = make([]solver.Var, nt), make([]solver.Var, nt)
			for t := range nt {
				n[i][t] = md.AddVar(fmt.Sprintf("n_i%d_t%d_h%d", i, t, h), 0, float64(m.Types[t].Count), 0, solver.Continuous)
				lam[i][t] = md.AddVar(fmt.Sprintf("lambda_i%d_t%d_h%d", i, t, h), 0, math.Inf(1), 0, solver.Continuous)
				v := md.AddVar(fmt.Sprintf("v_i%d_t%d_h%d", i, t, h), 0, math.Inf(1), 1, solver.Continuous)
				vs[k] = append(vs[k], v)
				md.AddRow(fmt.Sprintf("latency_i%d_t%d_h%d", i, t, h), math.Inf(-1), 0, solver.Term{Var: lam[i][t], Coef: 1}, solver.Term{Var: n[i][t], Coef: -m.Cap(i, t)}, solver.Term{Var: v, Coef: -1})
			}
			terms := make([]solver.Term, nt)
			for t := range nt {
				terms[t] = solver.Term{Var: lam[i][t], Coef: 1}
			}
			load := periodLoad(st, per[q], i)
			md.AddRow(fmt.Sprintf("load_i%d_h%d", i, h), load, load, terms...)
		}
		for t := range nt {
			terms := make([]solver.Term, nm)
			for i := range nm {
				terms[i] = solver.Term{Var: n[i][t], Coef: 1}
			}
			md.AddRow(fmt.Sprintf("nodes_t%d_h%d", t, h), math.Inf(-1), float64(m.Types[t].Count), terms...)
		}
	}
	res, err := p.solve(st, md, opts, info, "inference excess")
	if err != nil {
		return nil, err
	}
	if !res.HasSolution {
		return nil, fmt.Errorf("cedla: slot %d: inference excess: no solution (%s)", st.Slot, res.Status)
	}
	for k, q := range open {
		for _, v := range vs[k] {
			excess[q] += math.Max(res.Value(v), 0)
		}
	}
	return excess, nil
}

// cannotFinish reports whether j's remaining epochs exceed what the
// fastest node type could do in every slot from now to the last slot j
// may use (one restart lost unless it already runs on a fastest type):
// then no plan finishes it, and it is rejected at once rather than when
// its last slot passes.
func (p *Policy) cannotFinish(st *policy.SlotState, j policy.SlotJobState) bool {
	m := st.Models
	best := 0.0
	for t := range m.Types {
		best = math.Max(best, m.Epochs[j.Model][t])
	}
	can := float64(p.lastSlot(j)-st.Slot+1) * best
	if j.LastType < 0 || m.Epochs[j.Model][j.LastType] < best {
		can -= best * p.RestartSeconds / policy.SlotSeconds
	}
	return j.Remaining > can*(1+1e-9)+1e-9
}

// lastSlot is the last slot j may run in: its deadline, in Problem 2 (and
// for an admitted job whose deadline Problem 1 cannot keep) plus the
// allowance.
func (p *Policy) lastSlot(j policy.SlotJobState) int {
	if p.a.Mode == Soft || p.late[j.ID] {
		return j.Deadline + int(math.Ceil(p.a.LateAllowance*float64(j.Deadline-j.Arrival+1)))
	}
	return j.Deadline
}

// Plan implements policy.SlotPlanner: it solves the problem over the
// forecast window (solvePlan); when Problem 1 (or 2) is infeasible it first
// finds the rejections of least priority weight that make it feasible,
// rejects those jobs, and solves again (Algorithm 1, lines 06-10). No
// stopping rule reads the clock: a solve that runs past Args.SafetyNet is
// an error naming the slot, never a different plan.
func (p *Policy) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	opts := solver.Options{TimeLimit: p.a.SafetyNet, RelGap: p.a.RelGap, MaxNodes: p.a.MaxNodes, Threads: p.a.Threads, Log: p.Log}
	// A job is admitted or rejected at its first plan (Alg. 1: "the
	// system rejects some of requests", before they run). A new job past
	// the last slot it may use, or with more work left than the fastest
	// node could do by then, is rejected now. An admitted job is never
	// rejected: when Problem 1 cannot keep its deadline (past it, or too
	// much work left), its deadline row is soft in this plan (late), as
	// in Problem 2; a job past even Problem 2's allowance is not planned
	// again (it stays unfinished and counts as late).
	p.late = map[int]bool{}
	var jobs []policy.SlotJobState
	var rejected []int
	for _, j := range st.Jobs {
		if !j.Admitted {
			if p.lastSlot(j) < st.Slot || p.cannotFinish(st, j) {
				rejected = append(rejected, j.ID)
			} else {
				jobs = append(jobs, j)
			}
			continue
		}
		if p.lastSlot(j) < st.Slot || p.cannotFinish(st, j) {
			p.late[j.ID] = true
		}
		if p.lastSlot(j) >= st.Slot {
			jobs = append(jobs, j)
		}
	}
	info := &policy.PlanInfo{Slot: st.Slot}
	// Problem 1: the latency excess inference alone cannot avoid, before
	// any training row (build caps each period's excess by it).
	var excess []float64
	if p.a.Mode == Hard {
		var err error
		if excess, err = p.inferenceExcess(st, opts, info); err != nil {
			return nil, err
		}
	}
	res, c, err := p.solvePlan(st, jobs, excess, opts, info)
	// HiGHS 1.3.1 may end a primal-infeasible LP relaxation with model
	// status "unknown" instead of proving it infeasible (seen with admitted
	// jobs whose deadline rows no plan can keep: 280 jobs, 1.75e5
	// requests/min, seed 1, slot 224). With jobs the rejection program may
	// soften or reject, that is read as infeasible; any other error (the
	// safety net included) stays an error.
	unknown := err != nil && res.Status == solver.Error && len(jobs) > 0
	if err != nil && !unknown {
		return nil, err
	}
	if unknown || res.Status == solver.Infeasible || res.Status == solver.InfeasibleOrUnbounded {
		info.Infeasible = true
		rm, rc := p.build(st, jobs, true, nil, excess, false)
		rr, err := p.solve(st, rm, opts, info, "rejections")
		if err != nil {
			return nil, err
		}
		if !rr.HasSolution {
			return nil, fmt.Errorf("cedla: slot %d: the rejection problem has no solution (%s)", st.Slot, rr.Status)
		}
		var keep []policy.SlotJobState
		for k, j := range jobs {
			switch {
			case rc.r[k] < 0 || rr.Value(rc.r[k]) <= 0.5:
				keep = append(keep, j)
			case j.Admitted:
				p.late[j.ID] = true
				keep = append(keep, j)
			default:
				rejected = append(rejected, j.ID)
			}
		}
		jobs = keep
		if res, c, err = p.solvePlan(st, jobs, excess, opts, info); err != nil {
			return nil, err
		}
	}
	for _, j := range st.Jobs {
		if p.late[j.ID] {
			info.Softened = append(info.Softened, j.ID)
		}
	}
	info.Status, info.Gap, info.Objective, info.Bound = res.Status.String(), res.Gap, res.Objective, res.Bound
	if !res.HasSolution {
		return nil, fmt.Errorf("cedla: slot %d: no plan after %d rejections (%s)", st.Slot, len(rejected), res.Status)
	}
	return &policy.SlotPlan{Slots: p.decisions(st, jobs, c, res), Reject: rejected, Info: info}, nil
}

// The ways a plan is found (PlanInfo.Heuristic).
const (
	// ByRounding: the LP relaxation's training placements rounded
	// (round), the rest re-solved as an LP, within RelGap of the
	// relaxation's bound.
	ByRounding = "lp-rounding-up"
	// ByRoundingHalf: as ByRounding, each placement rounded at 1/2.
	ByRoundingHalf = "lp-rounding-half"
	// ByDive: LP diving (dive) ended within RelGap of the bound.
	ByDive = "lp-dive"
	// ByFixResolve: the MIP over the relaxation's fractional binary
	// placements only (fixResolve), within RelGap of the relaxation's
	// bound.
	ByFixResolve = "fix-resolve"
	// ByMIP: HiGHS's branch and cut, started from the rounded plan when
	// it was feasible.
	ByMIP = "mip"
	// ByMIPStart is ByMIP given the rounded plan as its first incumbent.
	ByMIPStart = "mip+start"
	// NoPlan: the LP relaxation is infeasible, so is the program.
	NoPlan = "lp-infeasible"
)

// solvePlan solves Problem 1 or 2 for jobs: first the LP relaxation (the
// bound), then the relaxation's placements rounded and the rest re-solved
// as an LP; a rounded plan within RelGap of the bound is the plan (a
// deterministic primal heuristic: the root bound of these programs is
// tight, so this is where most solves end). Otherwise the MIP is solved,
// with the rounded plan, when feasible, as its first incumbent. Every
// step is deterministic for the state; info records what was used.
func (p *Policy) solvePlan(st *policy.SlotState, jobs []policy.SlotJobState, excess []float64, opts solver.Options, info *policy.PlanInfo) (solver.Result, *cols, error) {
	info.Vars, info.Rows = 0, 0
	lm, lc := p.build(st, jobs, false, nil, excess, true)
	lr, err := p.solve(st, lm, opts, info, "LP relaxation")
	if err != nil {
		return lr, nil, err
	}
	info.Vars, info.Rows = lm.NumVars(), lm.NumRows()
	if lr.Status == solver.Infeasible || lr.Status == solver.InfeasibleOrUnbounded {
		info.Heuristic = NoPlan
		return lr, lc, nil
	}
	if !lr.HasSolution {
		return lr, nil, fmt.Errorf("cedla: slot %d: LP relaxation: no solution (%s)", st.Slot, lr.Status)
	}
	// Two roundings, each followed by an LP over the rest: the one that
	// keeps every job's use of the binary periods (rounded up), then the
	// one at 1/2; the first within RelGap of the bound is the plan, the
	// better feasible one otherwise starts the MIP.
	var best solver.Result
	var bc *cols
	// accept takes a heuristic's plan within RelGap of the relaxation's
	// bound (marking it, its bound and gap, and how it was found in
	// info), else keeps it as the MIP's start when it is the best so far.
	accept := func(r *solver.Result, c *cols, how string) bool {
		if !r.HasSolution {
			return false
		}
		if gap := gapOf(r.Objective, lr.Objective); gap <= p.a.RelGap {
			info.Heuristic = how
			r.Status, r.Bound, r.Gap = solver.Optimal, lr.Objective, gap
			return true
		}
		if !best.HasSolution || r.Objective < best.Objective {
			best, bc = *r, c
		}
		return false
	}
	for _, up := range []bool{true, false} {
		fix := p.round(st, jobs, lc, lr, up)
		rm, rc := p.build(st, jobs, false, fix, excess, true)
		rr, err := p.solve(st, rm, opts, info, "rounded plan")
		if err != nil {
			return rr, nil, err
		}
		how := ByRounding
		if !up {
			how = ByRoundingHalf
		}
		if accept(&rr, rc, how) {
			return rr, rc, nil
		}
	}
	// Diving: the relaxation re-solved with its largest fractional
	// placements fixed to 1, until every binary placement is integral.
	dr, dc, err := p.dive(st, jobs, excess, opts, info, lc, lr)
	if err != nil {
		return dr, nil, err
	}
	if accept(&dr, dc, ByDive) {
		return dr, dc, nil
	}
	// Fix and resolve: the MIP with every binary placement the relaxation
	// already has integral fixed there; only its fractional placements
	// stay binary, so the search is small. A feasible point of it is one
	// of the whole program's, accepted within RelGap of the relaxation's
	// bound.
	fr, fc, err := p.fixResolve(st, jobs, excess, opts, info, lc, lr)
	if err != nil {
		return fr, nil, err
	}
	if accept(&fr, fc, ByFixResolve) {
		return fr, fc, nil
	}
	rr, rc := best, bc
	mm, mc := p.build(st, jobs, false, nil, excess, false)
	o := opts
	info.Heuristic = ByMIP
	if rr.HasSolution {
		o.Start = rr.X
		info.Heuristic = ByMIPStart
	}
	mr, err := p.solve(st, mm, o, info, "MIP")
	if err != nil {
		return mr, nil, err
	}
	if !mr.HasSolution && rr.HasSolution && (mr.Status == solver.IterationLimit) {
		// The node limit stopped a search that found nothing better than
		// the start it was given (HiGHS then reports no incumbent).
		rr.Status, rr.Bound, rr.Gap = solver.IterationLimit, lr.Objective, gapOf(rr.Objective, lr.Objective)
		return rr, rc, nil
	}
	return mr, mc, nil
}

// maxDive bounds the LPs of one dive.
const maxDive = 12

// dive re-solves the LP relaxation (lr, columns lc) with fractional binary
// placements fixed to 1, round by round: in each, per job and binary
// period the type with the largest placement (ties: the lower type), and
// of those every one at least 1/2, or, when none is, the single largest
// (ties: the lower job index, then the earlier period); placements at 1
// stay fixed. It ends when every binary placement is integral (the LP's
// point is then a plan), when an LP is infeasible, or after maxDive LPs
// (no plan).
func (p *Policy) dive(st *policy.SlotState, jobs []policy.SlotJobState, excess []float64, opts solver.Options, info *policy.PlanInfo, lc *cols, lr solver.Result) (solver.Result, *cols, error) {
	nt := len(st.Models.Types)
	nb := len(lc.per)
	if p.a.BinarySlots > 0 {
		nb = min(p.a.BinarySlots, nb)
	}
	fix := map[[3]int]float64{}
	c, r := lc, lr
	for range maxDive {
		type cand struct {
			k, t, q int
			v       float64
		}
		var frac []cand
		for k := range jobs {
			for q := range nb {
				best := cand{k, -1, q, 0}
				integral := true
				for t := range nt {
					x, ok := c.x[[3]int{k, t, q}]
					if !ok {
						continue
					}
					v := r.Value(x)
					if v > 1e-6 && v < 1-1e-6 {
						integral = false
					}
					if v >= 1-1e-6 {
						fix[[3]int{k, t, q}] = 1
					}
					if v > best.v+1e-9 {
						best.t, best.v = t, v
					}
				}
				if !integral && best.t >= 0 {
					frac = append(frac, best)
				}
			}
		}
		if len(frac) == 0 {
			return r, c, nil
		}
		n := 0
		for _, f := range frac {
			if f.v >= 0.5 {
				fix[[3]int{f.k, f.t, f.q}] = 1
				n++
			}
		}
		if n == 0 {
			top := frac[0]
			for _, f := range frac[1:] {
				if f.v > top.v+1e-9 {
					top = f
				}
			}
			fix[[3]int{top.k, top.t, top.q}] = 1
		}
		dm, dc := p.build(st, jobs, false, fix, excess, true)
		dr, err := p.solve(st, dm, opts, info, "dive")
		if err != nil {
			return dr, nil, err
		}
		if !dr.HasSolution {
			return dr, nil, nil
		}
		c, r = dc, dr
	}
	return solver.Result{Status: solver.IterationLimit}, nil, nil
}

// fixResolve solves the MIP with every binary placement that the LP
// relaxation lr (columns lc) holds at 0 or 1 (within 1e-6) fixed to that
// value; the fractional ones stay binary, the relaxed periods continuous.
// Its point, when it has one, is feasible for the whole program. A model
// without a fractional binary placement is not solved (the relaxation's
// point is then a plan, found by dive).
func (p *Policy) fixResolve(st *policy.SlotState, jobs []policy.SlotJobState, excess []float64, opts solver.Options, info *policy.PlanInfo, lc *cols, lr solver.Result) (solver.Result, *cols, error) {
	nt := len(st.Models.Types)
	nb := len(lc.per)
	if p.a.BinarySlots > 0 {
		nb = min(p.a.BinarySlots, nb)
	}
	fix := map[[3]int]float64{}
	free := 0
	for k := range jobs {
		for q := range nb {
			for t := range nt {
				x, ok := lc.x[[3]int{k, t, q}]
				if !ok {
					continue
				}
				switch v := lr.Value(x); {
				case v <= 1e-6:
					fix[[3]int{k, t, q}] = 0
				case v >= 1-1e-6:
					fix[[3]int{k, t, q}] = 1
				default:
					free++
				}
			}
		}
	}
	if free == 0 {
		return solver.Result{}, nil, nil
	}
	fm, fc := p.build(st, jobs, false, fix, excess, false)
	fr, err := p.solve(st, fm, opts, info, "fix and resolve")
	if err != nil {
		return fr, nil, err
	}
	return fr, fc, nil
}

// gapOf is the relative gap between a plan's objective and a bound.
func gapOf(obj, bound float64) float64 {
	d := math.Max(obj-bound, 0)
	if d == 0 {
		return 0
	}
	return d / math.Max(math.Abs(obj), 1e-9)
}

// solve runs one solve and adds its statistics to info; a solve stopped
// by the safety net is an error that names the slot and the setting.
func (p *Policy) solve(st *policy.SlotState, md *solver.Model, opts solver.Options, info *policy.PlanInfo, what string) (solver.Result, error) {
	res, err := p.s.Solve(context.Background(), md, opts)
	info.Seconds += res.Time.Seconds()
	info.Solves++
	info.Nodes += res.Nodes
	info.LPIterations += res.LPIterations
	if err != nil {
		return res, fmt.Errorf("cedla: slot %d: %s: %w", st.Slot, what, err)
	}
	if res.Status == solver.TimeLimit {
		return res, fmt.Errorf("cedla: slot %d: %s: the solve ran past the safety net of %v, which no plan may depend on; raise cedla.safety_net (a Go duration, e.g. 30m) or run on a less loaded machine",
			st.Slot, what, opts.TimeLimit)
	}
	return res, nil
}

// round is the heuristic's rounding of the LP relaxation lr over the
// binary periods. With up, each job runs in as many binary periods as its
// relaxed placements there add up to, rounded up (so its epochs row loses
// nothing to rounding), in the periods where they are largest (ties: the
// earlier period), on the type it uses most there (ties: the lower type).
// Without up, per job and period the type with the largest placement
// (ties: the lower type) is fixed to 1 when that placement is at least
// 1/2. Every other placement of the binary periods is fixed to 0; where a
// type then holds more runs in a period than it has nodes, the runs with
// the smallest placements (ties: the higher job ID) are fixed to 0. The
// relaxed periods stay free for the LP that follows.
func (p *Policy) round(st *policy.SlotState, jobs []policy.SlotJobState, c *cols, lr solver.Result, up bool) map[[3]int]float64 {
	nt := len(st.Models.Types)
	nb := len(c.per)
	if p.a.BinarySlots > 0 {
		nb = min(p.a.BinarySlots, nb)
	}
	type run struct {
		k int
		v float64
	}
	ones := make([][][]run, nt)
	for t := range nt {
		ones[t] = make([][]run, nb)
	}
	fix := map[[3]int]float64{}
	val := func(k, t, q int) (float64, bool) {
		x, ok := c.x[[3]int{k, t, q}]
		if !ok {
			return 0, false
		}
		fix[[3]int{k, t, q}] = 0
		return math.Max(lr.Value(x), 0), true
	}
	set := func(k, t, q int, v float64) {
		fix[[3]int{k, t, q}] = 1
		ones[t][q] = append(ones[t][q], run{k, v})
	}
	for k := range jobs {
		if !up {
			for q := range nb {
				best, bv := -1, 0.0
				for t := range nt {
					if v, ok := val(k, t, q); ok && v > bv+1e-9 {
						best, bv = t, v
					}
				}
				if best >= 0 && bv >= 0.5 {
					set(k, best, q, bv)
				}
			}
			continue
		}
		use := make([]float64, nb) // per period, summed over types
		byType := make([]float64, nt)
		var sum float64
		var qs []int
		for q := range nb {
			for t := range nt {
				if v, ok := val(k, t, q); ok {
					use[q] += v
					byType[t] += v
					sum += v
					if !slices.Contains(qs, q) {
						qs = append(qs, q)
					}
				}
			}
		}
		n := min(int(math.Ceil(sum-1e-6)), len(qs))
		if n <= 0 {
			continue
		}
		tt := 0
		for t := range nt {
			if byType[t] > byType[tt]+1e-9 {
				tt = t
			}
		}
		slices.SortStableFunc(qs, func(a, b int) int {
			switch {
			case use[a] > use[b]+1e-9:
				return -1
			case use[a] < use[b]-1e-9:
				return 1
			}
			return a - b
		})
		for _, q := range qs[:n] {
			set(k, tt, q, use[q])
		}
	}
	for t := range nt {
		for q := range nb {
			rs := ones[t][q]
			if len(rs) <= st.Models.Types[t].Count {
				continue
			}
			slices.SortStableFunc(rs, func(a, b run) int {
				switch {
				case a.v > b.v:
					return -1
				case a.v < b.v:
					return 1
				}
				return jobs[a.k].ID - jobs[b.k].ID
			})
			for _, r := range rs[st.Models.Types[t].Count:] {
				fix[[3]int{r.k, t, q}] = 0
			}
		}
	}
	return fix
}

// decisions reads the solution, rounding integers and rescaling the loads
// so that each model's load adds up exactly.
func (p *Policy) decisions(st *policy.SlotState, jobs []policy.SlotJobState, c *cols, res solver.Result) []policy.SlotDecision {
	m := st.Models
	nm, nt, H := len(m.Models), len(m.Types), len(st.Price)
	out := make([]policy.SlotDecision, H)
	ceil := func(v solver.Var) int { return int(math.Ceil(res.Value(v) - 1e-6)) }
	for tau := range H {
		q := c.of[tau]
		d := policy.NewSlotDecision(m)
		busy := make([]int, nt)
		for k, j := range jobs {
			for t := range nt {
				if x, ok := c.x[[3]int{k, t, q}]; ok && res.Value(x) > 0.5 && p.lastSlot(j) >= st.Slot+tau {
					d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: t})
					busy[t]++
				}
			}
		}
		for i := range nm {
			var sum float64
			for t := range nt {
				d.Infer[i][t] = ceil(c.n[i][t][q])
				if d.Infer[i][t] > 0 {
					d.Load[i][t] = math.Max(res.Value(c.lam[i][t][q]), 0)
				}
				sum += d.Load[i][t]
				busy[t] += d.Infer[i][t]
			}
			want := st.Load[tau][i]
			if sum > 0 {
				for t := range nt {
					d.Load[i][t] *= want / sum
				}
			} else if want > 0 {
				// Rounding, or a program that places the load on no node
				// (under overload the excess columns v and w carry it at
				// their price whatever n is), leaves load without nodes.
				best := 0
				for t := range nt {
					if d.Infer[i][t] > d.Infer[i][best] {
						best = t
					}
				}
				if d.Infer[i][best] == 0 {
					best = newNode(m, i, best, busy)
					d.Infer[i][best] = 1
					busy[best]++
				}
				d.Load[i][best] = want
			}
		}
		// The engine reads the split (policy.PlanReading), as it reads
		// every planner's.
		repair(m, &d, busy)
		for t := range nt {
			d.On[t] = min(max(ceil(c.s[t][q]), busy[t]), m.Types[t].Count)
		}
		out[tau] = d
	}
	return out
}

// repair undoes what rounding the inference node counts up can do: while
// a type has more busy nodes than it has, one inference node of the model
// with the most nodes there is given up, and the load it carried moves to
// the other types, first into the headroom of that model's nodes there
// (within the latency bound), then onto free nodes; what finds no room
// stays on the type's remaining nodes (the engine counts the violation).
// When the model would have no node left and no type has room (small
// clusters, every node busy), a training run pauses for the slot and the
// model takes its node.
func repair(m *policy.SlotModels, d *policy.SlotDecision, busy []int) {
	nm, nt := len(m.Models), len(m.Types)
	for t := range nt {
		for busy[t] > m.Types[t].Count {
			best := -1
			for i := range nm {
				if d.Infer[i][t] > 0 && (best < 0 || d.Infer[i][t] > d.Infer[best][t]) {
					best = i
				}
			}
			if best < 0 {
				return // only training: the program's capacity row prevents it
			}
			i := best
			moved := d.Load[i][t] / float64(d.Infer[i][t])
			d.Infer[i][t]--
			busy[t]--
			d.Load[i][t] -= moved
			for u := range nt {
				if u == t || moved <= 0 {
					continue
				}
				c := m.Cap(i, u)
				if c <= 0 {
					continue
				}
				if room := float64(d.Infer[i][u])*c - d.Load[i][u]; room > 0 {
					take := math.Min(room, moved)
					d.Load[i][u] += take
					moved -= take
				}
				for moved > 0 && busy[u] < m.Types[u].Count {
					take := math.Min(c, moved)
					d.Infer[i][u]++
					busy[u]++
					d.Load[i][u] += take
					moved -= take
				}
			}
			if moved > 0 {
				// No room within the bound: onto the model's remaining nodes,
				// here or elsewhere (the engine counts the violation); with
				// none at all the node stays and the engine rejects the plan.
				to := -1
				if d.Infer[i][t] > 0 {
					to = t
				}
				for u := range nt {
					if to < 0 && d.Infer[i][u] > 0 {
						to = u
					}
				}
				if to < 0 {
					// The model has no other node and no type has room
					// within the bound: it takes, in this order, a free
					// node of a type that cannot meet the bound, the node
					// of a training run that pauses for this slot (on t if
					// one runs there, else the first elsewhere), or a node
					// of another model (one without load, else the one
					// with the most nodes), since all inference is served
					// (eq. 24) and the engine counts the violation.
					if u := freeType(m, busy); u >= 0 {
						d.Infer[i][u]++
						busy[u]++
						d.Load[i][u] += moved
						continue
					}
					k := slices.IndexFunc(d.Train, func(r policy.SlotRun) bool { return r.Type == t })
					if k < 0 && len(d.Train) > 0 {
						k = 0
					}
					if k >= 0 {
						u := d.Train[k].Type
						d.Train = slices.Delete(d.Train, k, k+1)
						d.Infer[i][u]++
						d.Load[i][u] += moved
						continue
					}
					if u := donate(m, d, i); u >= 0 {
						d.Infer[i][u]++
						d.Load[i][u] += moved
						continue
					}
					// Fewer nodes than models with load, which the
					// scenario refuses before any run: the node stays and
					// the engine rejects the plan.
					d.Infer[i][t]++
					busy[t]++
					d.Load[i][t] += moved
					return
				}
				d.Load[i][to] += moved
			}
		}
	}
}

// freeType is the first type with a node that is off or idle (-1: none).
func freeType(m *policy.SlotModels, busy []int) int {
	for t := range m.Types {
		if busy[t] < m.Types[t].Count {
			return t
		}
	}
	return -1
}

// newNode is the type on which model i, which has load but no node, gets
// one: prefer when it has a free node, else the type with a free node that
// serves i fastest (Mu), else (every node busy: repair frees one) prefer
// when it has nodes, else the type with nodes that serves i fastest.
func newNode(m *policy.SlotModels, i, prefer int, busy []int) int {
	if busy[prefer] < m.Types[prefer].Count {
		return prefer
	}
	best := -1
	for t := range m.Types {
		if busy[t] < m.Types[t].Count && (best < 0 || m.Mu[i][t] > m.Mu[i][best]) {
			best = t
		}
	}
	if best >= 0 {
		return best
	}
	if m.Types[prefer].Count > 0 {
		return prefer
	}
	for t := range m.Types {
		if m.Types[t].Count > 0 && (best < 0 || m.Mu[i][t] > m.Mu[i][best]) {
			best = t
		}
	}
	return max(best, 0)
}

// donate gives one inference node of another model to model i, which has
// load and no node: from a model without load if one holds a node, else
// from the model with the most nodes in all when it has two or more (ties:
// the lower index), on the type where that model has the most (ties: the
// lower type); the load that node carried moves to the model's remaining
// nodes. It returns the node's type, or -1 when no model can give one.
func donate(m *policy.SlotModels, d *policy.SlotDecision, i int) int {
	nm, nt := len(m.Models), len(m.Types)
	total := func(j int) (n int, load float64) {
		for t := range nt {
			n += d.Infer[j][t]
			load += d.Load[j][t]
		}
		return n, load
	}
	from := -1
	for j := range nm {
		if n, load := total(j); j != i && n > 0 && load == 0 {
			from = j
			break
		}
	}
	if from < 0 {
		most := 1
		for j := range nm {
			if n, _ := total(j); j != i && n > most {
				from, most = j, n
			}
		}
	}
	if from < 0 {
		return -1
	}
	u := 0
	for t := range nt {
		if d.Infer[from][t] > d.Infer[from][u] {
			u = t
		}
	}
	moved := d.Load[from][u] / float64(d.Infer[from][u])
	d.Infer[from][u]--
	d.Load[from][u] -= moved
	if moved > 0 {
		to := u
		for t := 0; d.Infer[from][to] == 0 && t < nt; t++ {
			to = t
		}
		d.Load[from][to] += moved
	}
	return u
}
