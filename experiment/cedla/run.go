package cedla

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	pcedla "github.com/wattsched/wattsched/policy/cedla"
	"github.com/wattsched/wattsched/policy/eprons"
	"github.com/wattsched/wattsched/policy/pambt"
	"github.com/wattsched/wattsched/policy/slotfifo"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/solver"
)

// Systems are the compared planners, in the paper's order.
var Systems = []string{"CE-DLA soft", "CE-DLA hard", "FIFO", "EPRONS", "PA-MBT"}

// Setup is the fixed part of the study: nodes, models, fits, grid.
type Setup struct {
	Count          int // nodes per type (paper: 40)
	Slots          int // paper: 672
	Lookahead      int // CE-DLA's window (slots)
	Every          int // CE-DLA re-plans every Every slots
	RestartSeconds float64
	Derived        *Derived
	Fitted         *Fitted
	Price, Carbon  []float64 // per slot, Slots + Lookahead
	Account        *grid.Account
	Args           pcedla.Args
	Solver         solver.Solver
	// Restart and TurnOn costs (USD) given to the planners.
	Restart, TurnOn float64
}

// NewSetup builds the setup from a models table and the embedded price
// and carbon weeks.
func NewSetup(tb *Table, count, slots, lookahead, every int, seed uint64) (*Setup, error) {
	ps, cs, err := Grid()
	if err != nil {
		return nil, err
	}
	return NewSetupGrid(tb, count, slots, lookahead, every, seed, ps, cs)
}

// NewSetupGrid is NewSetup with given price and carbon series; slot 0 is
// each series' first hour.
func NewSetupGrid(tb *Table, count, slots, lookahead, every int, seed uint64, ps, cs *grid.Series) (*Setup, error) {
	d := Derive(tb)
	f, err := Fit(d, seed)
	if err != nil {
		return nil, err
	}
	price, err := PerSlot(ps, slots+lookahead)
	if err != nil {
		return nil, err
	}
	carbon, err := PerSlot(cs, slots+lookahead)
	if err != nil {
		return nil, err
	}
	var mean float64
	for _, p := range price[:slots] {
		mean += p / float64(slots)
	}
	s := &Setup{Count: count, Slots: slots, Lookahead: lookahead, Every: every, RestartSeconds: 60, Derived: d, Fitted: f,
		Price: price, Carbon: carbon, Solver: solver.HiGHS()}
	// The costs the paper leaves open (docs/policies/cedla.md): a restart
	// costs its lost minute of a 250 W node at the week's mean price; a
	// turn-on half an hour of idle draw at that price.
	s.Restart = 250 * s.RestartSeconds / 3.6e9 * mean
	s.TurnOn = float64(d.Idle[0]) * 1800 / 3.6e9 * mean
	s.Args = studyArgs(every)
	// Carbon is priced by the engine's hourly ledger against the 2021 week.
	s.Account = &grid.Account{Price: ps, Carbon: cs, Start: ps.Start, PUE: 1}
	return s, nil
}

// Case is one point of the study.
type Case struct {
	System    string
	Jobs      int
	ReqPerMin float64
	Seed      uint64
	// Reading is how the engine reads every plan's inference split (""
	// is policy.DefaultPlanReading).
	Reading policy.PlanReading `json:",omitempty"`
}

// Label names a case.
func (c Case) Label() string {
	l := fmt.Sprintf("%s, %d jobs, %.4g req/min, seed %d", c.System, c.Jobs, c.ReqPerMin, c.Seed)
	if c.Reading != "" && c.Reading != policy.DefaultPlanReading {
		l += ", read " + string(c.Reading)
	}
	return l
}

// reading is c's plan reading, the default for "".
func (c Case) reading() policy.PlanReading {
	if c.Reading == "" {
		return policy.DefaultPlanReading
	}
	return c.Reading
}

// Metrics is what one run measured.
type Metrics struct {
	Case
	Finished, Rejected, Late int
	// DeadlineViolation is the share of admitted jobs that missed their
	// deadline (or never finished); MeanLateness in slots over them all.
	DeadlineViolation, MeanLateness float64
	LatencyViolation                float64 // share of requests
	EnergyKWh, CostUSD, CO2Kg       float64
	// CostPerfTrain and CostPerfInfer are jobs (requests) that met their
	// requirement per USD of the cluster's energy.
	CostPerfTrain, CostPerfInfer float64
	// PriceBands is the share of training node-slots per band of
	// sim.PriceBands.
	PriceBands []float64
	// TrainShare is training's share of the busy node-slots (nodes
	// training or serving inference, summed over the slots).
	TrainShare float64
	// Softened counts the admitted jobs whose deadline row some plan made
	// soft because it could not keep it (CE-DLA; never rejected).
	Softened       int
	Plans          int
	HardInfeasible int
	// MIPPlans counts plans the rounding heuristic did not settle within
	// the gap, so that HiGHS's branch and cut solved them.
	MIPPlans                  int
	MaxGap                    float64
	TurnOns, Restarts, Wasted int
	// Wall-clock figures: printed, never written (files are byte-identical
	// for a seed).
	MeanSolveS float64 `json:"-"`
	MaxSolv    float64 `json:"-"`
	WallS      float64 `json:"-"`
	result     *sim.SlottedResult
	workload   *Workload
}

// Planner returns the planner of a system.
func (s *Setup) Planner(system string) (policy.SlotPlanner, int, error) {
	switch system {
	case "CE-DLA soft", "CE-DLA hard":
		a := s.Args
		a.Mode = pcedla.Soft
		if system == "CE-DLA hard" {
			a.Mode = pcedla.Hard
		}
		p, err := pcedla.New(a, s.Solver, s.RestartSeconds)
		return p, s.Every, err
	case "FIFO":
		return slotfifo.New(), 1, nil
	case "EPRONS":
		p, err := eprons.New(eprons.Args{}.Default())
		return p, 1, err
	case "PA-MBT":
		return pambt.New(), 1, nil
	}
	return nil, 0, fmt.Errorf("cedla: unknown system %q", system)
}

// Run runs one case.
func (s *Setup) Run(c Case) (*Metrics, error) {
	ms, err := s.RunReadings(c, []policy.PlanReading{c.reading()})
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// RunReadings runs case c once per plan reading, in the order given. The
// readings change only how the engine splits inference between a model's
// node groups, never a planner's state (jobs, their progress, the nodes
// on), so the planner is asked once per state: the later readings reuse
// the plans of the first (Memo), and a state not seen before is planned.
func (s *Setup) RunReadings(c Case, readings []policy.PlanReading) ([]*Metrics, error) {
	start := time.Now()
	base := s.Derived.Models(s.Fitted, s.Count, nil, s.Restart, s.TurnOn)
	w, err := Generate(s.Derived, base, c.Jobs, c.ReqPerMin, s.Slots, s.Lookahead, c.Seed)
	if err != nil {
		return nil, err
	}
	m := s.Derived.Models(s.Fitted, s.Count, w.Bound, s.Restart, s.TurnOn)
	p, every, err := s.Planner(c.System)
	if err != nil {
		return nil, err
	}
	look := 1 // the baselines plan one slot with its forecast
	if _, ok := p.(*pcedla.Policy); ok {
		look = s.Lookahead
	}
	memo := NewMemo(p)
	var out []*Metrics
	for _, r := range readings {
		c.Reading = r
		mt, err := s.RunPlanner(c, m, w, memo, every, look, start, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, mt)
	}
	return out, nil
}

// Memo is a slotted planner that asks its planner once per state: a
// planner's plan is a function of its state (slot, jobs with their
// remaining epochs, last node type and admission, nodes on; the load and
// price forecasts are the run's, fixed by the slot).
type Memo struct {
	p     policy.SlotPlanner
	plans map[string]*policy.SlotPlan
	// Asked counts the states planned by p.
	Asked int
}

// NewMemo returns a Memo over p.
func NewMemo(p policy.SlotPlanner) *Memo { return &Memo{p: p, plans: map[string]*policy.SlotPlan{}} }

// Plan implements policy.SlotPlanner.
func (mm *Memo) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%v|", st.Slot, st.On)
	for _, j := range st.Jobs {
		fmt.Fprintf(&b, "%d:%s:%d:%t;", j.ID, strconv.FormatFloat(j.Remaining, 'g', -1, 64), j.LastType, j.Admitted)
	}
	k := b.String()
	if p, ok := mm.plans[k]; ok {
		return p, nil
	}
	p, err := mm.p.Plan(st)
	if err != nil {
		return nil, err
	}
	mm.Asked++
	mm.plans[k] = p
	return p, nil
}

// RunPlanner runs planner p, which re-plans every `every` slots over a
// window of look slots (the one-slot heuristics: 1 and 1), on workload w
// and cluster m (the study's or a scenario's) and measures it; start is
// when the run began (for the printed wall time only); progress, if set,
// is told each twentieth of the slots done (sim.SlottedOptions.Progress).
func (s *Setup) RunPlanner(c Case, m *policy.SlotModels, w *Workload, p policy.SlotPlanner, every, look int, start time.Time, progress func(done, total int)) (*Metrics, error) {
	var err error
	boot := hw.Joules(float64(s.Derived.Idle[0]) * 120)
	r, err := sim.RunSlotted(sim.SlottedOptions{Models: m, Truth: s.Derived.Truth(s.RestartSeconds, boot), Jobs: w.Jobs, Load: w.Load,
		Price: s.Price, Slots: s.Slots, Lookahead: look, Every: every, Planner: p, Reading: c.reading(), Progress: progress})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Label(), err)
	}
	mt := &Metrics{Case: c, result: r, workload: w, TurnOns: r.TurnOns, Wasted: r.Wasted}
	admitted := 0
	for _, j := range r.Jobs {
		switch {
		case j.Rejected:
			mt.Rejected++
			continue
		case j.Done:
			mt.Finished++
		}
		admitted++
		mt.Restarts += max(j.Starts-1, 0)
		if !j.Done || j.Lateness > 0 {
			mt.Late++
		}
		mt.MeanLateness += float64(j.Lateness)
	}
	if admitted > 0 {
		mt.DeadlineViolation = float64(mt.Late) / float64(admitted)
		mt.MeanLateness /= float64(admitted)
	}
	if r.Requests > 0 {
		mt.LatencyViolation = r.ViolatingRequests / r.Requests
	}
	mt.EnergyKWh = float64(r.Ledger.Total()) / 3.6e6
	// Money against the 2020 price week, carbon against the 2021 week.
	if mt.CostUSD, err = s.Account.Price.Apply(r.Ledger.Hourly(), s.Account.Price.Start, grid.USDPerJouleUSDPerMWh); err != nil {
		return nil, err
	}
	co2, err := s.Account.Carbon.Apply(r.Ledger.Hourly(), s.Account.Carbon.Start, grid.KgPerJouleGramsPerKWh)
	if err != nil {
		return nil, err
	}
	mt.CO2Kg = co2
	if mt.CostUSD > 0 {
		mt.CostPerfTrain = float64(len(w.Jobs)-mt.Rejected-mt.Late) / mt.CostUSD
		mt.CostPerfInfer = (r.Requests - r.ViolatingRequests) / mt.CostUSD
	}
	var ts int
	for _, n := range r.TrainSlotsByPrice {
		ts += n
	}
	for _, n := range r.TrainSlotsByPrice {
		mt.PriceBands = append(mt.PriceBands, float64(n)/math.Max(float64(ts), 1))
	}
	var train, busy int
	for _, smp := range r.Samples {
		train += smp.Training
		busy += smp.Training + smp.Serving
	}
	mt.TrainShare = float64(train) / math.Max(float64(busy), 1)
	mt.Plans = len(r.Plans)
	var sum float64
	softened := map[int]bool{}
	for _, pl := range r.Plans {
		for _, id := range pl.Softened {
			softened[id] = true
		}
		if pl.Infeasible {
			mt.HardInfeasible++
		}
		if pl.Heuristic == pcedla.ByMIP || pl.Heuristic == pcedla.ByMIPStart {
			mt.MIPPlans++
		}
		mt.MaxGap = math.Max(mt.MaxGap, pl.Gap)
		mt.MaxSolv = math.Max(mt.MaxSolv, pl.Seconds)
		sum += pl.Seconds
	}
	mt.Softened = len(softened)
	if mt.Plans > 0 {
		mt.MeanSolveS = sum / float64(mt.Plans)
	}
	mt.WallS = time.Since(start).Seconds()
	return mt, nil
}
