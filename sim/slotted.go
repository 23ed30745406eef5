package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// SlotTruth is what the slotted engine takes as the true behaviour of the
// nodes: the planners see fitted models (policy.SlotModels), the engine
// charges this.
type SlotTruth struct {
	// TrainW[i][t] is the draw of a node of type t training model i.
	TrainW [][]hw.Watts
	// InferW returns the draw of a node of type t serving lambda
	// requests/s of model i (lambda <= mu).
	InferW func(i, t int, lambda float64) hw.Watts
	// RestartSeconds of a slot are lost when a job starts on a node it
	// did not run on in the previous slot (re-initialising the GPU,
	// uploading the model, reading the data again; cedla Sec. 2.2.5).
	RestartSeconds float64
	// Boot is the energy of turning a node on.
	Boot hw.Joules
}

// SlottedOptions is one run of the slotted engine.
type SlottedOptions struct {
	Models *policy.SlotModels // what planners see; Epochs, Mu, Bound are also the truth
	Truth  SlotTruth
	Jobs   []policy.SlotJob
	// Load[h][i] is the inference arrival rate (requests/s) of model i in
	// slot h; Price[h] the price (USD/MWh). Both cover at least Slots +
	// Lookahead slots.
	Load  [][]float64
	Price []float64
	Slots int
	// Lookahead is how many slots of forecasts a planner is given; Every
	// how many slots of each plan are applied before planning again (and
	// a slot in which a job arrives always starts a new plan).
	Lookahead, Every int
	Planner          policy.SlotPlanner
	// Reading is how every decision's inference split is read before it
	// is applied (policy.PlanReading; "": the default, concentrate): one
	// step for every planner.
	Reading policy.PlanReading
	// Record, if set, receives each slot's per-node states.
	Record func(slot int, nodes []SlotNode)
	// Progress, if set, is called each time another twentieth of the
	// slots has been applied (with the slots done and Slots): a long
	// run's sign of life, decided by the slots, never by the clock. It
	// changes nothing the run computes.
	Progress func(done, total int)
}

// SlotNode is one node's state in a slot.
type SlotNode struct {
	Type int
	On   bool
	// Job is the training job it runs (-1: none); Model the model it
	// serves inference for (-1: none), at Lambda requests/s.
	Job, Model int
	Lambda     float64
}

// SlotJobResult is one training job's outcome.
type SlotJobResult struct {
	ID       int  `json:"id"`
	Done     bool `json:"done"`
	Rejected bool `json:"rejected"`
	// Finish is the last slot it ran in (-1: never ran).
	Finish   int     `json:"finish_slot"`
	Lateness int     `json:"lateness_slots"`
	Starts   int     `json:"starts"`
	Slots    int     `json:"slots_run"`
	Left     float64 `json:"epochs_left"`
}

// SlotSample is the cluster in one slot.
type SlotSample struct {
	Slot     int
	Power    hw.Watts // mean over the slot
	On       []int    // per type
	Training int      // nodes running a job
	Serving  int      // nodes serving inference
	Price    float64
	// Progress is the fraction of all epochs of arrived jobs done so far.
	Progress float64
}

// SlottedResult is what a run measured.
type SlottedResult struct {
	Jobs    []SlotJobResult
	Samples []SlotSample
	Ledger  *Ledger
	// Components of the ledger.
	Train, Infer, Idle, Boot int
	// Requests and ViolatingRequests count inference requests, and those
	// served by nodes whose M/M/1 latency exceeds the bound.
	Requests, ViolatingRequests float64
	// TrainSlotsByPrice[b] counts node-slots of training in price band b
	// of PriceBands.
	TrainSlotsByPrice []int
	Plans             []policy.PlanInfo
	TurnOns           int
	// Wasted counts planned runs of jobs that had already finished (the
	// node stays on, idle).
	Wasted int
	prevJ  hw.Joules
}

// PriceBands are the upper bounds (USD/MWh) of the price bands of cedla
// Table 2: [0, 20), [20, 30), [30, inf).
var PriceBands = []float64{20, 30, math.Inf(1)}

// ErrSlotPlan wraps every violation of the slotted model by a plan.
var ErrSlotPlan = errors.New("slotted plan violates the model")

type slotJob struct {
	j        policy.SlotJob
	left     float64
	node     int // node it ran on in the previous slot (-1)
	res      SlotJobResult
	arrived  bool
	rejected bool
	// admitted: a plan has seen the job and not rejected it.
	admitted bool
}

// RunSlotted evaluates a planner over the slots: it asks for plans, checks
// every decision (capacity per type, one node per job, jobs arrived and not
// rejected, inference load served in full), assigns concrete nodes (a job
// keeps its node while it stays on that node type), advances the jobs and
// charges energy. A job is admitted or rejected by the first plan that
// sees it (cedla Problem 1, Alg. 1); a plan that rejects an admitted job
// violates the model. Every decision is read by o.Reading before it is
// checked and applied. It is a time-slotted evaluator, not a model of the event
// kernel: every decision holds for a whole slot and nothing happens between
// slot boundaries.
func RunSlotted(o SlottedOptions) (*SlottedResult, error) {
	m := o.Models
	if err := m.Validate(); err != nil {
		return nil, err
	}
	nm, nt := len(m.Models), len(m.Types)
	if o.Slots < 1 || o.Every < 1 || o.Lookahead < o.Every {
		return nil, fmt.Errorf("slotted: slots %d, every %d, lookahead %d", o.Slots, o.Every, o.Lookahead)
	}
	if err := o.Reading.Validate(); err != nil {
		return nil, fmt.Errorf("slotted: %w", err)
	}
	if len(o.Load) < o.Slots+o.Lookahead || len(o.Price) < o.Slots+o.Lookahead {
		return nil, fmt.Errorf("slotted: %d load and %d price slots, want %d", len(o.Load), len(o.Price), o.Slots+o.Lookahead)
	}
	var nodeType []int
	for t, ty := range m.Types {
		for range ty.Count {
			nodeType = append(nodeType, t)
		}
	}
	jobs := make([]*slotJob, len(o.Jobs))
	byID := map[int]*slotJob{}
	for k, j := range o.Jobs {
		if j.Model < 0 || j.Model >= nm || j.Arrival < 0 || j.Deadline < j.Arrival || !(j.Epochs > 0) {
			return nil, fmt.Errorf("slotted: job %d: model %d, arrival %d, deadline %d, epochs %v", j.ID, j.Model, j.Arrival, j.Deadline, j.Epochs)
		}
		if byID[j.ID] != nil {
			return nil, fmt.Errorf("slotted: job ID %d twice", j.ID)
		}
		jobs[k] = &slotJob{j: j, left: j.Epochs, node: -1, res: SlotJobResult{ID: j.ID, Finish: -1}}
		byID[j.ID] = jobs[k]
	}
	res := &SlottedResult{Ledger: &Ledger{}, TrainSlotsByPrice: make([]int, len(PriceBands))}
	l := res.Ledger
	res.Train, res.Infer, res.Idle, res.Boot = l.Add("training"), l.Add("inference"), l.Add("idle"), l.Add("boot")
	nodes := make([]SlotNode, len(nodeType))
	for k := range nodes {
		nodes[k] = SlotNode{Type: nodeType[k], Job: -1, Model: -1}
	}
	var plan []policy.SlotDecision
	used := 0
	var totalEpochs, doneEpochs float64
	for h := 0; h < o.Slots; h++ {
		arrival := false
		for _, j := range jobs {
			if !j.arrived && j.j.Arrival <= h {
				j.arrived, arrival = true, true
				totalEpochs += j.j.Epochs
			}
		}
		if used >= len(plan) || used >= o.Every || arrival {
			st := &policy.SlotState{Slot: h, Horizon: o.Slots, Models: m, Load: o.Load[h : h+o.Lookahead], Price: o.Price[h : h+o.Lookahead], On: make([]int, nt)}
			for _, n := range nodes {
				if n.On {
					st.On[n.Type]++
				}
			}
			for _, j := range jobs {
				if j.arrived && !j.rejected && !j.res.Done {
					last := -1
					if j.node >= 0 {
						last = nodeType[j.node]
					}
					st.Jobs = append(st.Jobs, policy.SlotJobState{SlotJob: j.j, Remaining: j.left, LastType: last, Admitted: j.admitted})
				}
			}
			p, err := o.Planner.Plan(st)
			if err != nil {
				return nil, fmt.Errorf("slot %d: plan: %w", h, err)
			}
			if len(p.Slots) == 0 {
				return nil, fmt.Errorf("slot %d: %w: empty plan", h, ErrSlotPlan)
			}
			for _, id := range p.Reject {
				j := byID[id]
				if j == nil || !j.arrived || j.rejected || j.res.Done {
					return nil, fmt.Errorf("slot %d: %w: rejects job %d, which is not waiting", h, ErrSlotPlan, id)
				}
				if j.admitted {
					return nil, fmt.Errorf("slot %d: %w: rejects job %d, admitted by an earlier plan (a job is admitted or rejected once, at its first plan)", h, ErrSlotPlan, id)
				}
				j.rejected, j.res.Rejected = true, true
			}
			for _, js := range st.Jobs {
				if j := byID[js.ID]; !j.rejected {
					j.admitted = true
				}
			}
			if p.Info != nil {
				res.Plans = append(res.Plans, *p.Info)
			}
			plan, used = p.Slots, 0
		}
		d := o.Reading.Read(m, plan[used])
		used++
		if err := res.applySlot(h, d, o, nodes, byID); err != nil {
			return nil, fmt.Errorf("slot %d: %w", h, err)
		}
		doneEpochs = 0
		for _, j := range jobs {
			if j.arrived {
				doneEpochs += j.j.Epochs - j.left
			}
		}
		if totalEpochs > 0 {
			res.Samples[len(res.Samples)-1].Progress = doneEpochs / totalEpochs
		}
		if o.Record != nil {
			o.Record(h, nodes)
		}
		if done := h + 1; o.Progress != nil && done*20/o.Slots != h*20/o.Slots {
			o.Progress(done, o.Slots)
		}
	}
	for _, j := range jobs {
		j.res.Left = j.left
		if j.res.Done {
			j.res.Lateness = max(j.res.Finish-j.j.Deadline, 0)
		} else if !j.rejected {
			// An unfinished job is late by every slot after its deadline.
			j.res.Lateness = max(o.Slots-1-j.j.Deadline, 0)
		}
		res.Jobs = append(res.Jobs, j.res)
	}
	return res, nil
}

// applySlot checks decision d, assigns nodes, advances jobs, charges energy.
func (res *SlottedResult) applySlot(h int, d policy.SlotDecision, o SlottedOptions, nodes []SlotNode, byID map[int]*slotJob) error {
	m := o.Models
	nm, nt := len(m.Models), len(m.Types)
	if len(d.On) != nt || len(d.Infer) != nm || len(d.Load) != nm {
		return fmt.Errorf("%w: decision shape", ErrSlotPlan)
	}
	train := make([]int, nt)
	seen := map[int]bool{}
	for _, r := range d.Train {
		j := byID[r.Job]
		switch {
		case j == nil:
			return fmt.Errorf("%w: unknown job %d", ErrSlotPlan, r.Job)
		case r.Type < 0 || r.Type >= nt:
			return fmt.Errorf("%w: job %d on type %d", ErrSlotPlan, r.Job, r.Type)
		case seen[r.Job]:
			return fmt.Errorf("%w: job %d on two nodes", ErrSlotPlan, r.Job)
		case !j.arrived:
			return fmt.Errorf("%w: job %d runs before its arrival slot %d", ErrSlotPlan, r.Job, j.j.Arrival)
		case j.rejected:
			return fmt.Errorf("%w: job %d runs after its rejection", ErrSlotPlan, r.Job)
		}
		seen[r.Job] = true
		train[r.Type]++
	}
	for t := range nt {
		if len(d.Infer[0]) != nt {
			return fmt.Errorf("%w: decision shape", ErrSlotPlan)
		}
		busy := train[t]
		for i := range nm {
			if len(d.Infer[i]) != nt || len(d.Load[i]) != nt || d.Infer[i][t] < 0 || d.Load[i][t] < 0 || math.IsNaN(d.Load[i][t]) {
				return fmt.Errorf("%w: inference of %s on %s", ErrSlotPlan, m.Models[i], m.Types[t].Name)
			}
			if d.Load[i][t] > 0 && d.Infer[i][t] == 0 {
				return fmt.Errorf("%w: %.3g requests/s of %s on no %s node", ErrSlotPlan, d.Load[i][t], m.Models[i], m.Types[t].Name)
			}
			busy += d.Infer[i][t]
		}
		if d.On[t] < busy || d.On[t] > m.Types[t].Count {
			return fmt.Errorf("%w: %s: %d on, %d busy, %d exist", ErrSlotPlan, m.Types[t].Name, d.On[t], busy, m.Types[t].Count)
		}
	}
	for i := range nm {
		var sum float64
		for t := range nt {
			sum += d.Load[i][t]
		}
		if want := o.Load[h][i]; math.Abs(sum-want) > 1e-6*math.Max(1, want) {
			return fmt.Errorf("%w: %s: %.6g requests/s placed, %.6g arrive", ErrSlotPlan, m.Models[i], sum, want)
		}
	}
	// Nodes: a continuing job keeps its node; types turn nodes on from
	// the lowest ID and off from the highest free one.
	keep := map[int]bool{}
	runs := slices.Clone(d.Train)
	slices.SortFunc(runs, func(a, b policy.SlotRun) int { return a.Job - b.Job })
	for _, r := range runs {
		if j := byID[r.Job]; j.node >= 0 && nodes[j.node].Type == r.Type && !j.res.Done {
			keep[j.node] = true
		}
	}
	for t := range nt {
		on := 0
		for k := range nodes {
			if nodes[k].Type == t && nodes[k].On {
				on++
			}
		}
		for k := len(nodes) - 1; k >= 0 && on > d.On[t]; k-- {
			if nodes[k].Type == t && nodes[k].On && !keep[k] {
				nodes[k].On = false
				on--
			}
		}
		for k := 0; k < len(nodes) && on < d.On[t]; k++ {
			if nodes[k].Type == t && !nodes[k].On {
				nodes[k].On = true
				on++
				res.TurnOns++
				res.Ledger.Charge(res.Boot, o.Truth.Boot, slotTime(h))
			}
		}
	}
	for k := range nodes {
		nodes[k].Job, nodes[k].Model, nodes[k].Lambda = -1, -1, 0
	}
	taken := make([]bool, len(nodes))
	for k := range keep {
		taken[k] = true
	}
	free := func(t int) int {
		for k := range nodes {
			if nodes[k].Type == t && nodes[k].On && !taken[k] {
				taken[k] = true
				return k
			}
		}
		return -1
	}
	from, to := slotTime(h), slotTime(h+1)
	band := 0
	for band < len(PriceBands)-1 && o.Price[h] >= PriceBands[band] {
		band++
	}
	ran := map[int]bool{}
	for _, r := range runs {
		j := byID[r.Job]
		if j.res.Done {
			res.Wasted++
			continue
		}
		k := -1
		if j.node >= 0 && keep[j.node] && nodes[j.node].Type == r.Type {
			k = j.node
		} else {
			k = free(r.Type)
		}
		nodes[k].Job = r.Job
		ran[r.Job] = true
		sec := float64(policy.SlotSeconds)
		if k != j.node {
			sec -= o.Truth.RestartSeconds
			j.res.Starts++
		}
		rate := m.Epochs[j.j.Model][r.Type] / policy.SlotSeconds // epochs per second
		need := j.left / rate
		busy := math.Min(sec, need)
		j.left -= busy * rate
		if j.left <= 1e-9 {
			j.left, j.res.Done = 0, true
		}
		j.node = k
		j.res.Finish, j.res.Slots = h, j.res.Slots+1
		// Restart time draws training power; after the job ends the node idles.
		active := float64(policy.SlotSeconds) - sec + busy
		w := o.Truth.TrainW[j.j.Model][r.Type]
		idle := m.Types[r.Type].Idle
		res.Ledger.Accrue(res.Train, hw.Watts(float64(w)*active/policy.SlotSeconds), from, to)
		res.Ledger.Accrue(res.Idle, hw.Watts(float64(idle)*(policy.SlotSeconds-active)/policy.SlotSeconds), from, to)
		res.TrainSlotsByPrice[band]++
	}
	for _, j := range byID {
		if !ran[j.j.ID] {
			j.node = -1
		}
	}
	for i := range nm {
		for t := range nt {
			n := d.Infer[i][t]
			if n == 0 {
				continue
			}
			lambda := d.Load[i][t] / float64(n)
			mu := m.Mu[i][t]
			reqs := d.Load[i][t] * policy.SlotSeconds
			res.Requests += reqs
			if policy.Latency(mu, lambda) > m.Bound[i]*(1+1e-9) {
				res.ViolatingRequests += reqs
			}
			w := o.Truth.InferW(i, t, math.Min(lambda, mu))
			for range n {
				k := free(t)
				nodes[k].Model, nodes[k].Lambda = i, lambda
				res.Ledger.Accrue(res.Infer, w, from, to)
			}
		}
	}
	s := SlotSample{Slot: h, On: make([]int, nt), Price: o.Price[h]}
	for k, n := range nodes {
		if !n.On {
			continue
		}
		s.On[n.Type]++
		switch {
		case n.Job >= 0:
			s.Training++
		case n.Model >= 0:
			s.Serving++
		case !taken[k]:
			res.Ledger.Accrue(res.Idle, m.Types[n.Type].Idle, from, to)
		}
	}
	var joules hw.Joules
	for c := range res.Ledger.Len() {
		joules += res.Ledger.Energy(c)
	}
	s.Power = hw.Watts(float64(joules-res.prevJ) / policy.SlotSeconds)
	res.prevJ = joules
	res.Samples = append(res.Samples, s)
	return nil
}

func slotTime(h int) job.Time { return job.Time(int64(h) * policy.SlotSeconds * 1000) }
