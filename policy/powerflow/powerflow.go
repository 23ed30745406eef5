// Package powerflow implements PowerFlow (Gu et al., "Energy-Efficient GPU
// Clusters Scheduling for Deep Learning", Sections 5.2-5.3, Algorithm 1):
// under the cluster power limit (the paper's eta*G*Pmax, set by the
// scenario and read from the state) it allocates GPUs one step at a
// time by the marginal return priority_G (eq. 20) at each job's most
// energy-efficient frequency (eq. 17), then raises frequencies by
// priority_F (eq. 21) while the limit allows; GPU counts are powers of two
// (network packing), placed buddy-style with migration, and unused nodes
// are shut down. docs/policies/powerflow.md lists every choice made where
// the paper is silent.
package powerflow

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "powerflow"

// Args configure PowerFlow.
type Args struct {
	// ProfileNewCounts profiles a job on every GPU count it has not run on
	// (Section 5.2); off for the profiled-oracle variant (Section 6.3).
	ProfileNewCounts bool `yaml:"profile_new_counts"`
	// MinRescaleSec keeps a job's GPU count for this long after its
	// placement changed (0: re-allocate freely at every event). The paper
	// re-allocates at every event and is silent on thrashing; with a
	// checkpoint/restart cost per change that would restart jobs at
	// nearly every event.
	MinRescaleSec float64 `yaml:"min_rescale_s"`
	// CorrectPower scales the predicted power of every job by the ratio
	// of the metered to the predicted power of the jobs running at their
	// chosen frequencies, when the models under-predict (ratio above 1):
	// the limit then holds on the power drawn, not only on the models'
	// prediction. The paper is silent; its limit is on predicted power.
	CorrectPower bool `yaml:"correct_power"`
	// UnmeteredGuard (with CorrectPower) raises the predicted power of a
	// job the meter does not read at the planned configuration (new, a new
	// count or frequency, profiling) by this fraction until it does: the
	// correction only knows running jobs.
	UnmeteredGuard float64 `yaml:"unmetered_guard"`
}

// Default returns the setting of `reproduce powerflow`.
func (Args) Default() Args {
	return Args{ProfileNewCounts: true, MinRescaleSec: 600, CorrectPower: true, UnmeteredGuard: 0.03}
}

// Validate checks the arguments.
func (a Args) Validate() error {
	if !(a.MinRescaleSec >= 0) || math.IsInf(a.MinRescaleSec, 0) {
		return fmt.Errorf("powerflow.min_rescale_s: %v, want a finite number >= 0", a.MinRescaleSec)
	}
	if !(a.UnmeteredGuard >= 0 && a.UnmeteredGuard <= 1) {
		return fmt.Errorf("powerflow.unmetered_guard: %v, want 0..1", a.UnmeteredGuard)
	}
	return nil
}

// Policy is PowerFlow.
type Policy struct {
	args Args
	deps policy.ElasticDeps
	// tables is indexed by job ID; live counts the non-nil entries.
	tables []*table
	live   int
	// Scratch reused across decisions (a run makes thousands).
	plans       []plan
	held, first []keyed
	q, fq       pq
	reqs        []policy.PackRequest
	idx         []int
}

// keyed is a job index with its sort key.
type keyed struct {
	tie float64
	i   int
}

// byTie orders by key, then index (keys are finite).
func byTie(a, b keyed) int {
	switch {
	case a.tie < b.tie:
		return -1
	case a.tie > b.tie:
		return 1
	}
	return a.i - b.i
}

var _ policy.ElasticScheduler = (*Policy)(nil)

// New returns PowerFlow; it predicts with deps.Predictor and profiles at
// deps.ProfileFreqs.
func New(args Args, deps policy.ElasticDeps) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	if deps.Predictor == nil {
		return nil, fmt.Errorf("powerflow: no predictor")
	}
	return &Policy{args: args, deps: deps}, nil
}

// table holds a job's predictions by log2 GPU count and frequency index,
// each count's row computed when first needed.
type table struct {
	obs    int
	maxK   int
	t, e   [][]float64
	ee     []int     // most energy-efficient frequency per count (eq. 17)
	profW  []float64 // highest predicted power over the profiling frequencies
	remain float64
	v      *policy.ElasticView
	p      *Policy
}

func (p *Policy) table(v *policy.ElasticView, freqs int) *table {
	id := v.Job.ID
	if id >= len(p.tables) {
		p.tables = append(p.tables, make([]*table, id+1-len(p.tables))...)
	}
	tb := p.tables[id]
	if tb != nil && tb.obs == len(v.Obs) {
		tb.v = v
		return tb
	}
	if tb == nil {
		p.live++
	}
	k := log2(v.Job.MaxGPUs)
	tb = &table{obs: len(v.Obs), maxK: k, t: make([][]float64, k+1), e: make([][]float64, k+1),
		ee: make([]int, k+1), profW: make([]float64, k+1), v: v, p: p}
	for i := range tb.t {
		tb.t[i] = make([]float64, 0, freqs)
	}
	p.tables[id] = tb
	return tb
}

// row computes count index k's predictions; false if the job cannot run
// on that count.
func (tb *table) row(k, freqs int) bool {
	if k > tb.maxK {
		return false
	}
	if len(tb.t[k]) > 0 {
		return true
	}
	ts, es := tb.t[k][:0], make([]float64, freqs)
	for fi := 0; fi < freqs; fi++ {
		t, e, ok := tb.p.deps.Predictor.Predict(tb.v, 1<<k, fi)
		if !ok || !(t > 0) || !(e > 0) {
			tb.maxK = k - 1
			return false
		}
		ts, es[fi] = append(ts, t), e
	}
	best := 0
	for fi := range ts {
		if ts[fi]*es[fi] < ts[best]*es[best] {
			best = fi
		}
	}
	var pw float64
	for _, fi := range tb.p.deps.ProfileFreqs {
		pw = math.Max(pw, es[fi]/ts[fi])
	}
	tb.t[k], tb.e[k], tb.ee[k], tb.profW[k] = ts, es, best, pw
	return true
}

type plan struct {
	v     *policy.ElasticView
	tb    *table
	k, fi int // k = -1: no GPUs
	watts float64
	prof  bool
}

func (pl *plan) gpus() int {
	if pl.k < 0 {
		return 0
	}
	return 1 << pl.k
}

type item struct {
	job int
	pri float64
	tie float64
	seq int
}

// pq is a max-heap of items (typed, to keep the allocation loop cheap).
type pq []item

func (q pq) less(i, j int) bool {
	if q[i].pri != q[j].pri {
		return q[i].pri > q[j].pri
	}
	if q[i].tie != q[j].tie {
		return q[i].tie < q[j].tie
	}
	return q[i].seq < q[j].seq
}

func (q *pq) init() {
	for i := len(*q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

func (q *pq) push(it item) {
	*q = append(*q, it)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *pq) pop() item {
	h := *q
	it := h[0]
	n := len(h) - 1
	h[0] = h[n]
	*q = h[:n]
	q.down(0)
	return it
}

func (q *pq) down(i int) {
	h := *q
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// ScheduleElastic implements policy.ElasticScheduler (Algorithm 1 and
// Section 5.3).
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	g := st.Nodes * st.GPUsPerNode
	// within is the power-limit rule on predicted cluster power (eq. 19).
	within := func(w float64) bool { return st.PowerLimit.Allows(hw.Watts(w)) }
	freqs := len(st.FreqsMHz)
	for _, v := range st.Jobs {
		if v.Job.ID < 0 {
			panic(fmt.Sprintf("powerflow: job ID %d is negative", v.Job.ID))
		}
	}
	if p.live > 2*len(st.Jobs)+64 {
		// Drop the tables of jobs no longer active.
		// A job newer than every table has none yet: table() grows the
		// slice for it below.
		keep := make([]*table, len(p.tables))
		for _, v := range st.Jobs {
			if v.Job.ID < len(p.tables) {
				keep[v.Job.ID] = p.tables[v.Job.ID]
			}
		}
		p.tables, p.live = keep, 0
		for _, tb := range keep {
			if tb != nil {
				p.live++
			}
		}
	}
	plans := p.plans[:0]
	for range st.Jobs {
		plans = append(plans, plan{})
	}
	p.plans = plans
	free := g
	var jobW float64
	busy := 0
	for i, v := range st.Jobs {
		tb := p.table(v, freqs)
		tb.remain = v.Remaining
		tb.row(0, freqs)
		plans[i] = plan{v: v, tb: tb, k: -1}
	}
	corr, band := 1.0, 1.0
	if p.args.CorrectPower {
		corr, band = p.correction(st, freqs), 1+p.args.UnmeteredGuard
	}
	// guarded is a job's predicted power w on 2^k GPUs at frequency fi,
	// raised by the guard band unless the meter reads it running so now.
	guarded := func(pl *plan, k, fi int, prof bool, w float64) float64 {
		if !prof && pl.v.PowerW > 0 && pl.v.GPUs == 1<<k && pl.v.FreqIdx == fi {
			return w
		}
		return w * band
	}
	// Predicted cluster power with busy GPUs packed on ceil(busy/gpn)
	// nodes, the jobs' predictions corrected by the metered power.
	total := func(jw float64, b int) float64 {
		on := (b + st.GPUsPerNode - 1) / st.GPUsPerNode * st.GPUsPerNode
		return jw*corr + float64(on-b)*float64(st.IdleGPU)
	}
	// GPU allocation (Algorithm 1 lines 2-20). A job's first GPU has
	// infinite marginal return (shortest predicted remaining time first);
	// further GPUs double its count, by priority_G.
	// take moves job i to count index k at its most efficient frequency if
	// GPUs and the power limit allow.
	take := func(i, k int) bool {
		pl := &plans[i]
		extra := (1 << k) - pl.gpus()
		if extra > free || !pl.tb.row(k, freqs) {
			return false
		}
		fi := pl.tb.ee[k]
		w := pl.tb.e[k][fi] / pl.tb.t[k][fi]
		// A new count is profiled; a window that runs on this count
		// continues (the engine keeps it when the placement stays).
		prof := p.args.ProfileNewCounts && k > 0 && (!pl.v.Profiled(1<<k) || pl.v.Profiling && pl.v.GPUs == 1<<k)
		if prof {
			w = pl.tb.profW[k]
		}
		w = guarded(pl, k, fi, prof, w)
		if !within(total(jobW-pl.watts+w, busy+extra)) {
			return false
		}
		jobW += w - pl.watts
		busy += extra
		free -= extra
		pl.k, pl.fi, pl.watts, pl.prof = k, fi, w, prof
		return true
	}
	guard := job.Time(p.args.MinRescaleSec * 1000)
	held, first := p.held[:0], p.first[:0]
	for i := range plans {
		kd := keyed{tie: plans[i].tb.remain * plans[i].tb.t[0][plans[i].tb.ee[0]], i: i}
		if v := plans[i].v; v.GPUs > 0 && st.Now-v.PlacedAt < guard {
			held = append(held, kd)
		} else {
			first = append(first, kd)
		}
	}
	// Recently placed jobs keep their count first (shortest remaining first).
	slices.SortFunc(held, byTie)
	q := p.q[:0]
	seq := 0
	for _, kd := range held {
		if !take(kd.i, log2(plans[kd.i].v.GPUs)) {
			first = append(first, kd)
		}
	}
	growth := func(i int) {
		pl := &plans[i]
		k, fi := pl.k, pl.fi
		if !pl.tb.row(k+1, freqs) {
			return
		}
		f2 := pl.tb.ee[k+1]
		dT := pl.tb.t[k][fi] - pl.tb.t[k+1][f2]
		dE := pl.tb.e[k+1][f2] - pl.tb.e[k][fi]
		if dT > 0 {
			pri := math.MaxFloat64
			if dE > 0 {
				pri = dT / dE // eq. 20; the job's remaining iterations and the cluster totals cancel
			}
			q.push(item{job: i, pri: pri, seq: seq})
			seq++
		}
	}
	// First GPUs: infinite marginal return, so they all come before any
	// growth, shortest predicted remaining time first. They are taken from
	// a heap rather than a sorted list: the loop ends when the GPUs run out
	// or when even the lowest one-GPU power of all candidates breaks the
	// limit (every later take would fail, and a failed take changes
	// nothing), usually long before the queue's end.
	minW := math.Inf(1)
	fq := p.fq[:0]
	for _, kd := range first {
		fq = append(fq, item{job: kd.i, pri: -kd.tie, tie: float64(kd.i)})
		if tb := plans[kd.i].tb; len(tb.t[0]) > 0 {
			minW = math.Min(minW, tb.e[0][tb.ee[0]]/tb.t[0][tb.ee[0]])
		}
	}
	fq.init()
	for len(fq) > 0 && free > 0 && within(total(jobW+minW, busy+1)) {
		i := fq.pop().job
		if plans[i].k < 0 && take(i, 0) {
			growth(i)
		}
	}
	p.fq = fq
	for len(q) > 0 && free > 0 {
		it := q.pop()
		if take(it.job, plans[it.job].k+1) {
			growth(it.job)
		}
	}
	// Frequency configuration (lines 21-30), by priority_F (eq. 21).
	q = q[:0]
	// priF is job i's next frequency step's priority_F, or false if none.
	priF := func(pl *plan) (float64, bool) {
		if pl.k < 0 || pl.prof || pl.fi+1 >= freqs {
			return 0, false
		}
		dT := pl.tb.t[pl.k][pl.fi] - pl.tb.t[pl.k][pl.fi+1]
		dE := pl.tb.e[pl.k][pl.fi+1] - pl.tb.e[pl.k][pl.fi]
		if dT <= 0 {
			return 0, false
		}
		if dE > 0 {
			return dT / dE, true
		}
		return math.MaxFloat64, true
	}
	pushF := func(i int) {
		if pri, ok := priF(&plans[i]); ok {
			q.push(item{job: i, pri: pri, seq: seq})
			seq++
		}
	}
	// When every running job fits at the highest frequency, the greedy
	// below would end there: take it directly.
	top := jobW
	for i := range plans {
		if pl := &plans[i]; pl.k >= 0 && !pl.prof {
			top += guarded(pl, pl.k, freqs-1, false, pl.tb.e[pl.k][freqs-1]/pl.tb.t[pl.k][freqs-1]) - pl.watts
		}
	}
	if within(total(top, busy)) {
		for i := range plans {
			if pl := &plans[i]; pl.k >= 0 && !pl.prof {
				pl.fi, pl.watts = freqs-1, guarded(pl, pl.k, freqs-1, false, pl.tb.e[pl.k][freqs-1]/pl.tb.t[pl.k][freqs-1])
			}
		}
		jobW = top
	} else {
		for i := range plans {
			pushF(i)
		}
	}
	for len(q) > 0 {
		it := q.pop()
		pl := &plans[it.job]
		// Raise while this job's next step still beats the queue's head
		// (the same order as one step per pop).
		for {
			w := guarded(pl, pl.k, pl.fi+1, false, pl.tb.e[pl.k][pl.fi+1]/pl.tb.t[pl.k][pl.fi+1])
			if !within(total(jobW-pl.watts+w, busy)) {
				break
			}
			jobW += w - pl.watts
			pl.fi, pl.watts = pl.fi+1, w
			pri, ok := priF(pl)
			if !ok {
				break
			}
			if len(q) > 0 && (q[0].pri > pri || q[0].pri == pri) {
				q.push(item{job: it.job, pri: pri, seq: seq})
				seq++
				break
			}
		}
	}
	// Placement (Section 5.3): buddy allocation with migration.
	p.held, p.first, p.q = held, first, q
	reqs, idx := p.reqs[:0], p.idx[:0]
	for i := range plans {
		if plans[i].k >= 0 {
			reqs = append(reqs, policy.PackRequest{Job: plans[i].v.Job.ID, GPUs: plans[i].gpus(), Prev: plans[i].v.Nodes})
			idx = append(idx, i)
		}
	}
	places := policy.Pack(reqs, st.Nodes, st.GPUsPerNode, st.NodeOn, true)
	over := func() bool {
		return !within(jobW*corr + float64(nodesUsed(places, st.Nodes)*st.GPUsPerNode-busy)*float64(st.IdleGPU))
	}
	if over() {
		// Kept placements fragment the cluster so much that the idle GPUs
		// of partly used nodes break the limit: re-pack, keeping jobs in
		// place where that still packs, else moving every job (first-fit
		// decreasing: no more nodes stay on than the prediction assumed).
		if places = policy.Repack(reqs, st.Nodes, st.GPUsPerNode, st.NodeOn); over() {
			for i := range reqs {
				reqs[i].Prev = nil
			}
			places = policy.Repack(reqs, st.Nodes, st.GPUsPerNode, st.NodeOn)
		}
	}
	p.reqs, p.idx = reqs, idx
	d := policy.ElasticDecision{NodeOn: make([]bool, st.Nodes), Allocs: make([]policy.ElasticAlloc, 0, len(idx))}
	// Re-plan when the first held job's guard expires.
	for _, kd := range held {
		if at := plans[kd.i].v.PlacedAt + guard; at > st.Now && (d.WakeAt == 0 || at < d.WakeAt) {
			d.WakeAt = at
		}
	}
	for r, i := range idx {
		if places[r] == nil {
			continue // cannot happen with power-of-two counts that fit; the job waits
		}
		pl := &plans[i]
		for _, ns := range places[r] {
			d.NodeOn[ns.Node] = true
		}
		d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: pl.v.Job.ID, Nodes: places[r], FreqIdx: pl.fi, Pred: hw.Watts(pl.watts * corr), Profile: pl.prof})
		// A job that starts, changes count or frequency, or was not
		// metered now: read the meter again once it runs (after its
		// restart pause), so that the correction covers it.
		if p.args.CorrectPower && !pl.prof && (pl.v.PowerW <= 0 || pl.gpus() != pl.v.GPUs || pl.fi != pl.v.FreqIdx) {
			if at := st.Now + MeterRecheck; d.WakeAt == 0 || at < d.WakeAt {
				d.WakeAt = at
			}
		}
	}
	return d
}

// MeterRecheck is how long after a job starts or changes configuration
// PowerFlow re-plans with its metered power (correct_power): longer than a
// checkpoint/restart pause.
const MeterRecheck = job.Time(5 * 60 * 1000)

// correction is the metered over the predicted power of the jobs running
// at their chosen frequency (PowerW set), at least 1: 1 when none runs.
func (p *Policy) correction(st *policy.ElasticState, freqs int) float64 {
	var metered, predicted float64
	for _, v := range st.Jobs {
		if v.PowerW <= 0 || v.GPUs <= 0 || v.FreqIdx < 0 || v.FreqIdx >= freqs {
			continue
		}
		tb := p.table(v, freqs)
		k := log2(v.GPUs)
		if 1<<k != v.GPUs || !tb.row(k, freqs) {
			continue
		}
		metered += v.PowerW
		predicted += tb.e[k][v.FreqIdx] / tb.t[k][v.FreqIdx]
	}
	if predicted <= 0 {
		return 1
	}
	return math.Max(1, metered/predicted)
}

func nodesUsed(places [][]policy.NodeShare, nodes int) int {
	used := make([]bool, nodes)
	n := 0
	for _, p := range places {
		for _, ns := range p {
			if !used[ns.Node] {
				used[ns.Node] = true
				n++
			}
		}
	}
	return n
}
