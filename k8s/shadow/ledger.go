package shadow

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/replay"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
)

// Actual is the ledger name of what really ran.
const Actual = "actual"

// NoGPUModel is the GPU model group of nodes without GPUs.
const NoGPUModel = "none"

// Totals are one ledger's figures for one group of pods or nodes.
type Totals struct {
	// KWh is the energy: of the group's nodes (idle included) by GPU
	// model and in the total, of the group's pods (their attributed
	// dynamic energy) by namespace.
	KWh float64 `json:"energy_kwh"`
	// CostUSD and CO2Kg price KWh at the ledger's mean price and carbon
	// intensity per kWh (its hourly energy priced as `wattsched run`
	// prices a run, scenario.Account), PUE included.
	CostUSD float64 `json:"cost_usd"`
	CO2Kg   float64 `json:"co2_kg"`
	// Pods counts the pods of the group (by GPU model: on its nodes).
	Pods int `json:"pods"`
}

// Book is one ledger: what really ran, or one profile's placements.
type Book struct {
	Name  string `json:"name"`
	Total Totals `json:"total"`
	// IdleKWh is the part of Total.KWh the nodes draw with nothing on them.
	IdleKWh     float64           `json:"idle_kwh"`
	ByGPUModel  map[string]Totals `json:"by_gpu_model"`
	ByNamespace map[string]Totals `json:"by_namespace"`
	// NoNode counts the pods the profile found no node for on its shadow
	// state: they are not in this book.
	NoNode int `json:"no_node"`
	// Run is the simulator's replay accounting of the book.
	Run *tasks.ReplayRun `json:"-"`
}

// Ledger is the counterfactual ledger from the shadow's start to To.
type Ledger struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Pods are the pods in the ledger; Skipped those left out (see
	// Entry.Skipped).
	Pods    int     `json:"pods"`
	Skipped int     `json:"skipped"`
	Factor  float64 `json:"time_factor"`
	// Books: Actual first, then each profile.
	Books []*Book `json:"books"`
	// Measured is each node's measured energy (WithMeter; nil without),
	// MeasuredScope what it covers (gpu: DCGM's GPUs only; node: Kepler's
	// whole node).
	Measured      []MeasuredNode `json:"measured,omitempty"`
	MeasuredScope string         `json:"measured_scope,omitempty"`
}

// Ledger accounts the pods seen so far, each from its bind to its end (a
// running pod: to now), through the simulator's replay accounting
// (replay.Account: the PWR power model on the built-in catalog, as the kwok
// replay accounts kube-scheduler's placements), once with the actual
// placements and once per profile with its own. grid prices the energy
// (nil: the embedded default region and start).
func (s *Shadow) Ledger(now time.Time, grid *scenario.GridSpec) (*Ledger, error) {
	s.mu.Lock()
	entries := make([]Entry, 0, len(s.entries))
	for _, e := range s.entries {
		entries = append(entries, *e)
	}
	specs := make([]cluster.NodeSpec, 0, len(s.specs))
	for _, sp := range s.specs {
		specs = append(specs, sp)
	}
	ms := s.measured
	s.mu.Unlock()
	sort.Slice(specs, func(a, b int) bool { return specs[a].Name < specs[b].Name })
	var mnodes []MeasuredNode
	var mscope power.Scope
	if ms != nil {
		model := map[string]string{}
		for _, sp := range specs {
			model[sp.Name] = sp.GPUModel
		}
		mnodes, mscope = ms.snapshot(func(n string) string {
			if m := model[n]; m != "" {
				return m
			}
			return NoGPUModel
		})
	}
	known := map[string]bool{}
	for _, sp := range specs {
		known[sp.Name] = true
	}
	l := &Ledger{From: s.start, To: now, Factor: s.o.Factor, Measured: mnodes, MeasuredScope: string(mscope)}
	var used []Entry
	for _, e := range entries {
		if e.Skipped != "" || !known[e.Actual.Node] {
			l.Skipped++
			continue
		}
		used = append(used, e)
	}
	l.Pods = len(used)
	sc := &scenario.Scenario{Name: "shadow", Mode: scenario.Replay, FirstSeed: s.o.Seed, Grid: grid}
	env := replay.Env("shadow")
	names := append([]string{Actual}, s.Profiles()...)
	for b, name := range names {
		in := &tasks.Inputs{Nodes: specs}
		pr := &replay.PolicyRun{Policy: name, Start: s.start}
		ns := map[job.ID]string{}
		book := &Book{Name: name}
		for _, e := range used {
			pl := e.Actual
			if b > 0 && !e.Before {
				if pl = e.Shadow[b-1].Placement; pl.Node == "" {
					book.NoNode++
					continue
				}
			}
			end := e.Ended
			if end.IsZero() || end.After(now) {
				end = now
			}
			id := job.ID(len(in.Pods))
			work := max(end.Sub(e.Bound).Seconds()*s.o.Factor, 0.001)
			in.Pods = append(in.Pods, job.Task{ID: id, Name: e.Namespace + "/" + e.Name, Demand: e.Demand, Work: work, Class: -1,
				Submit: simMS(e.Bound, s.start, s.o.Factor)})
			pr.Pods = append(pr.Pods, replay.Observed{Node: pl.Node, GPUs: pl.GPUs, Bound: e.Bound})
			ns[id] = e.Namespace
		}
		if err := replay.Account(env, sc, in, pr, s.o.Factor); err != nil {
			return nil, fmt.Errorf("ledger %s: %w", name, err)
		}
		fillBook(book, pr.Run, in, ns)
		l.Books = append(l.Books, book)
	}
	return l, nil
}

// simMS is wall-clock time w in simulated milliseconds since start.
func simMS(w, start time.Time, factor float64) job.Time {
	return job.Time(math.Ceil(float64(w.Sub(start)) / float64(time.Millisecond) * factor))
}

// fillBook splits run's energy by GPU model (node energy) and namespace
// (the pods' attributed dynamic energy), priced at the run's mean cost
// and carbon per kWh.
func fillBook(b *Book, run *tasks.ReplayRun, in *tasks.Inputs, ns map[job.ID]string) {
	r := run.Result
	b.Run = run
	total := float64(r.CPUEnergy+r.GPUEnergy) / 3.6e6
	usdPerKWh, kgPerKWh := 0.0, 0.0
	if total > 0 {
		usdPerKWh, kgPerKWh = run.CostUSD/total, run.CO2Kg/total
	}
	priced := func(kwh float64, pods int) Totals {
		return Totals{KWh: kwh, CostUSD: kwh * usdPerKWh, CO2Kg: kwh * kgPerKWh, Pods: pods}
	}
	b.Total = Totals{KWh: total, CostUSD: run.CostUSD, CO2Kg: run.CO2Kg, Pods: len(in.Pods)}
	b.IdleKWh = float64(r.IdleEnergy) / 3.6e6
	model := func(id cluster.NodeID) string {
		if m := in.Nodes[id].GPUModel; m != "" {
			return m
		}
		return NoGPUModel
	}
	byModel, podsByModel := map[string]float64{}, map[string]int{}
	for i, e := range r.NodeEnergy {
		byModel[model(cluster.NodeID(i))] += float64(e) / 3.6e6
	}
	byNS, podsByNS := map[string]float64{}, map[string]int{}
	for _, t := range r.Tasks {
		byNS[ns[t.ID]] += float64(t.Energy) / 3.6e6
		podsByNS[ns[t.ID]]++
		if t.Node >= 0 {
			podsByModel[model(t.Node)]++
		}
	}
	b.ByGPUModel, b.ByNamespace = map[string]Totals{}, map[string]Totals{}
	for m, k := range byModel {
		b.ByGPUModel[m] = priced(k, podsByModel[m])
	}
	for n, k := range byNS {
		b.ByNamespace[n] = priced(k, podsByNS[n])
	}
}
