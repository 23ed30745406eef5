package cedla

import (
	"fmt"
	"math"
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
}

// Label names a case.
func (c Case) Label() string {
	return fmt.Sprintf("%s, %d jobs, %.4g req/min, seed %d", c.System, c.Jobs, c.ReqPerMin, c.Seed)
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
	PriceBands     []float64
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
	return s.RunPlanner(c, m, w, p, every, look, start, nil)
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
		Price: s.Price, Slots: s.Slots, Lookahead: look, Every: every, Planner: p, Progress: progress})
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
	mt.Plans = len(r.Plans)
	var sum float64
	for _, pl := range r.Plans {
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
	if mt.Plans > 0 {
		mt.MeanSolveS = sum / float64(mt.Plans)
	}
	mt.WallS = time.Since(start).Seconds()
	return mt, nil
}
