package policy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
)

// SlotSeconds is the length of one slot of the slotted mode (CE-DLA: 15
// minutes, delta in the paper's eq. 3).
const SlotSeconds = 900

// SlotType is one kind of identical single-GPU node of a slotted cluster.
type SlotType struct {
	Name  string
	Count int
	// F is the node's performance factor (cedla eq. 6: FP32 TFLOPS,
	// cores x boost clock x 2).
	F float64
	// Idle is the node's draw when on and without work (p_idle, eq. 11).
	Idle hw.Watts
}

// SlotModels are the per-(DNN model, node type) quantities a slotted
// planner plans with: rates from the performance model and power from the
// fitted statistical models (never the engine's true power).
type SlotModels struct {
	Models []string
	Types  []SlotType
	// Epochs[i][t] is epochs of model i trained in one slot on type t
	// (delta / mu^T, eq. 3).
	Epochs [][]float64
	// Mu[i][t] is the inference service rate mu^I (requests/s).
	Mu [][]float64
	// Bound[i] is the latency bound Q^I of model i (s).
	Bound []float64
	// TrainW[i][t] is the predicted draw of a node of type t training
	// model i, idle included (eqs. 6 and 11).
	TrainW [][]hw.Watts
	// InferBaseW[i][t] + InferPerReqW[i][t] x lambda is the predicted draw
	// of a node of type t serving lambda requests/s of model i, idle
	// included (eqs. 9 and 11).
	InferBaseW, InferPerReqW [][]float64
	// Restart is O^hr (USD per start of a training job on a node, eq. 15);
	// TurnOn is O^drs (USD per node turned on, eq. 16).
	Restart, TurnOn float64
}

// Cap is the largest arrival rate (requests/s) one node of type t may take
// for model i and keep the M/M/1 latency 1/(mu-lambda) + 1/mu (eq. 4)
// within the bound: eq. 29 solved for lambda, mu - mu/(Q mu - 1); 0 when
// even an idle node misses the bound (Q mu <= 2).
func (m *SlotModels) Cap(i, t int) float64 {
	mu, q := m.Mu[i][t], m.Bound[i]
	if q*mu <= 2 {
		return 0
	}
	return mu - mu/(q*mu-1)
}

// Latency is the M/M/1 latency of eq. 4 at arrival rate lambda (+Inf when
// lambda >= mu).
func Latency(mu, lambda float64) float64 {
	if lambda >= mu {
		return math.Inf(1)
	}
	return 1/(mu-lambda) + 1/mu
}

// SlotJob is a DL training job B_ij of the slotted mode.
type SlotJob struct {
	ID    int
	Model int
	// Arrival is A_ij, Deadline Q^T_ij: the job may run in slots
	// Arrival..Deadline (inclusive).
	Arrival, Deadline int
	Epochs            float64
	// Priority orders rejections: a lower value is rejected first.
	Priority int
}

// SlotJobState is a job as a planner sees it.
type SlotJobState struct {
	SlotJob
	Remaining float64
	// LastType is the node type it ran on in the previous slot (-1: none).
	LastType int
	// Admitted is set once a plan has seen the job and not rejected it
	// (its first plan, at its arrival slot, decides it: cedla Problem 1,
	// Alg. 1). The engine refuses a plan that rejects an admitted job.
	Admitted bool
}

// SlotState is what a slotted planner is given at the start of slot Slot.
type SlotState struct {
	Slot    int
	Horizon int // total slots of the run
	Models  *SlotModels
	// Jobs are the arrived, unfinished, not rejected jobs, by ID.
	Jobs []SlotJobState
	// Load[h][i] and Price[h] (USD/MWh) are the forecasts for slots
	// Slot+h (the paper assumes them exact over the control horizon).
	Load  [][]float64
	Price []float64
	// On[t] is how many nodes of type t were on in the previous slot.
	On []int
}

// SlotRun puts a training job on a node of a type for one slot.
type SlotRun struct{ Job, Type int }

// SlotDecision is what a planner decides for one slot, per node type: the
// engine assigns the concrete nodes (nodes of a type are identical).
type SlotDecision struct {
	// On[t] nodes of type t are on.
	On []int
	// Train lists the jobs that run (at most one type each).
	Train []SlotRun
	// Infer[i][t] nodes of type t serve model i, with Load[i][t]
	// requests/s in all, split evenly over them.
	Infer [][]int
	Load  [][]float64
}

// PlanInfo describes one solve of a planner (zero for heuristics).
type PlanInfo struct {
	Slot      int     `json:"slot"`
	Status    string  `json:"status"`
	Gap       float64 `json:"gap"`
	Seconds   float64 `json:"seconds"`
	Objective float64 `json:"objective"`
	Vars      int     `json:"vars"`
	Rows      int     `json:"rows"`
	// Infeasible is set when the hard problem had no solution and jobs
	// were rejected.
	Infeasible bool `json:"hard_infeasible"`
	// Bound is the best proven bound on the objective (the LP
	// relaxation's, or the MIP search's).
	Bound float64 `json:"bound"`
	// Heuristic names how the plan was found (cedla.ByRounding, ...).
	Heuristic string `json:"heuristic"`
	// Solves, Nodes and LPIterations add up every solve of the plan
	// (branch-and-bound nodes; simplex iterations as the solver reports
	// them). All three are deterministic, unlike Seconds.
	Solves       int   `json:"solves"`
	Nodes        int64 `json:"nodes"`
	LPIterations int64 `json:"lp_iterations"`
	// Softened lists the admitted jobs (by ID) whose deadline this plan
	// could not keep, so that their deadline rows were soft (priced at
	// the late penalty) in it rather than the jobs rejected (cedla
	// Problem 1: an admitted job is never rejected).
	Softened []int `json:"softened_jobs,omitempty"`
}

// SlotPlan is the decisions for slots Slot, Slot+1, ... and the jobs the
// planner rejects (never run again): only jobs not yet admitted (a job is
// admitted or rejected at its first plan, SlotJobState.Admitted).
type SlotPlan struct {
	Slots  []SlotDecision
	Reject []int
	Info   *PlanInfo
}

// SlotDeps is what slotted planners are built with.
type SlotDeps struct {
	// Solver is a solver.Solver for CE-DLA's mixed-integer programs:
	// solver.HiGHS() in a build with the highs tag, nil in a build without
	// a MILP solver (a planner that needs one then says how to get it). It
	// is untyped so that package policy, which the Kubernetes module
	// imports, does not link the HiGHS backend (policy/builtin asserts it).
	Solver any
	// RestartSeconds is the progress a job loses on every (re)start on a
	// node (the engine's SlotTruth.RestartSeconds, known from measurement).
	RestartSeconds float64
	// SolverLog, when not nil, receives the solver's log of every solve
	// (wattsched run --solver-log); planners that solve nothing ignore it.
	SolverLog io.Writer
}

// ErrNoSolver is what building a planner that solves mixed-integer
// programs (CE-DLA) returns when SlotDeps carries no solver: a wattsched
// built without the highs tag (solver.Available() is false).
var ErrNoSolver = errors.New("CE-DLA solves mixed-integer programs with HiGHS, and this wattsched was built without it: build it with 'make build' (which installs the HiGHS library), or 'make setup' then 'eval \"$(make -s env)\"' and 'go build -tags highs'; the baselines fifo, eprons and pambt need no solver")

// SlotPlanner plans a slotted cluster.
type SlotPlanner interface {
	// Plan returns decisions for at least the next slot.
	Plan(st *SlotState) (*SlotPlan, error)
}

// NewSlotDecision returns an empty decision for m's types and models.
func NewSlotDecision(m *SlotModels) SlotDecision {
	d := SlotDecision{On: make([]int, len(m.Types)), Infer: make([][]int, len(m.Models)), Load: make([][]float64, len(m.Models))}
	for i := range m.Models {
		d.Infer[i] = make([]int, len(m.Types))
		d.Load[i] = make([]float64, len(m.Types))
	}
	return d
}

// Validate checks the models' shapes and values.
func (m *SlotModels) Validate() error {
	nm, nt := len(m.Models), len(m.Types)
	if nm == 0 || nt == 0 {
		return fmt.Errorf("slotted models: %d models, %d node types", nm, nt)
	}
	for _, t := range m.Types {
		if t.Count < 0 || !(t.F > 0) || t.Idle < 0 {
			return fmt.Errorf("slotted models: node type %s: count %d, F %v, idle %v", t.Name, t.Count, t.F, t.Idle)
		}
	}
	check := func(name string, rows int, get func(i, t int) float64, pos bool) error {
		if rows != nm {
			return fmt.Errorf("slotted models: %s has %d rows, want %d", name, rows, nm)
		}
		for i := range nm {
			for t := range nt {
				v := get(i, t)
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || pos && v == 0 {
					return fmt.Errorf("slotted models: %s[%s][%s] = %v", name, m.Models[i], m.Types[t].Name, v)
				}
			}
		}
		return nil
	}
	for _, c := range []struct {
		name string
		rows [][]float64
		pos  bool
	}{{"epochs", m.Epochs, true}, {"mu", m.Mu, true}, {"infer_base_w", m.InferBaseW, false}, {"infer_per_req_w", m.InferPerReqW, false}} {
		rows := c.rows
		for _, r := range rows {
			if len(r) != nt {
				return fmt.Errorf("slotted models: %s row has %d columns, want %d", c.name, len(r), nt)
			}
		}
		if err := check(c.name, len(rows), func(i, t int) float64 { return rows[i][t] }, c.pos); err != nil {
			return err
		}
	}
	for _, r := range m.TrainW {
		if len(r) != nt {
			return fmt.Errorf("slotted models: train_w row has %d columns, want %d", len(r), nt)
		}
	}
	if err := check("train_w", len(m.TrainW), func(i, t int) float64 { return float64(m.TrainW[i][t]) }, false); err != nil {
		return err
	}
	if len(m.Bound) != nm {
		return fmt.Errorf("slotted models: %d latency bounds, want %d", len(m.Bound), nm)
	}
	for i, b := range m.Bound {
		if !(b > 0) || math.IsInf(b, 0) {
			return fmt.Errorf("slotted models: bound[%s] = %v", m.Models[i], b)
		}
	}
	if m.Restart < 0 || m.TurnOn < 0 {
		return fmt.Errorf("slotted models: restart %v, turn-on %v USD", m.Restart, m.TurnOn)
	}
	return nil
}

// PlanReading is how the engine reads a plan's inference split before it
// applies a slot, the same for every slotted planner (a load balancer's
// step, not a planner's decision): scenario key slotted.plan_reading.
type PlanReading string

// The readings.
const (
	// Concentrate moves each model's load above a node group's
	// latency-bound capacity into the room of its other groups, and puts
	// what finds no room on one group (Concentrate); the default.
	Concentrate PlanReading = "concentrate"
	// AsPlanned applies the planner's split as it is.
	AsPlanned PlanReading = "as-planned"
)

// DefaultPlanReading is the reading of a run that names none.
const DefaultPlanReading = Concentrate

// PlanReadings are the readings, the default first.
var PlanReadings = []PlanReading{Concentrate, AsPlanned}

// Validate checks r ("" is the default).
func (r PlanReading) Validate() error {
	switch r {
	case "", Concentrate, AsPlanned:
		return nil
	}
	return fmt.Errorf("plan reading %q, want %q or %q", r, Concentrate, AsPlanned)
}

// Read returns decision d as reading r reads it: d itself for AsPlanned,
// a copy with its loads concentrated for Concentrate (and ""). A decision
// of the wrong shape is returned as it is (the engine refuses it).
func (r PlanReading) Read(m *SlotModels, d SlotDecision) SlotDecision {
	if r == AsPlanned || len(d.Infer) != len(m.Models) || len(d.Load) != len(m.Models) {
		return d
	}
	for i := range d.Infer {
		if len(d.Infer[i]) != len(m.Types) || len(d.Load[i]) != len(m.Types) {
			return d
		}
	}
	c := d
	c.Load = make([][]float64, len(d.Load))
	for i := range d.Load {
		c.Load[i] = slices.Clone(d.Load[i])
	}
	ConcentrateLoad(m, &c)
	return c
}

// ConcentrateLoad moves inference load between a model's node groups (its
// nodes of one type, which share its load evenly) so that as few requests
// as possible are served over the latency bound: the engine counts every
// request of a group whose nodes exceed the bound (cedla eq. 29 per node),
// so an excess spread thinly over several groups, or a group left over its
// capacity by rounding while another has room, would count far more
// requests than the excess. Per model: load above a group's latency-bound
// capacity (Cap x nodes) moves into the room of its other groups (in type
// order); what finds no room goes onto the group with the least load left,
// which alone then violates the bound. Node counts and each model's total
// are unchanged.
func ConcentrateLoad(m *SlotModels, d *SlotDecision) {
	for i := range m.Models {
		over := 0.0
		for t := range m.Types {
			if n := d.Infer[i][t]; n > 0 {
				if c := float64(n) * m.Cap(i, t); d.Load[i][t] > c {
					over += d.Load[i][t] - c
					d.Load[i][t] = c
				}
			}
		}
		if over <= 0 {
			continue
		}
		for t := range m.Types {
			if n := d.Infer[i][t]; n > 0 && over > 0 {
				take := math.Min(float64(n)*m.Cap(i, t)-d.Load[i][t], over)
				d.Load[i][t] += take
				over -= take
			}
		}
		if over > 0 {
			to := -1
			for t := range m.Types {
				if d.Infer[i][t] > 0 && (to < 0 || d.Load[i][t] < d.Load[i][to]) {
					to = t
				}
			}
			d.Load[i][to] += over
		}
	}
}
