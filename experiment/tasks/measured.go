package tasks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/scenario"
)

// MeasuredSummary is what the recorded readings (scenario measured) did in
// one run: of the nodes the power gate looked up (each node once per
// decision), how many had a fresh reading, and why the others fell back
// to their estimate.
type MeasuredSummary struct {
	Lookups   int            `json:"lookups"`
	Measured  int            `json:"measured"`
	Fallbacks map[string]int `json:"fallbacks"`
}

// add is m plus o (nil stays nil when both are).
func (m *MeasuredSummary) add(o *MeasuredSummary) *MeasuredSummary {
	if o == nil {
		return m
	}
	out := &MeasuredSummary{Fallbacks: map[string]int{}}
	for _, x := range []*MeasuredSummary{m, o} {
		if x == nil {
			continue
		}
		out.Lookups += x.Lookups
		out.Measured += x.Measured
		for k, v := range x.Fallbacks {
			out.Fallbacks[k] += v
		}
	}
	return out
}

// recorded is a scenario's measured-power file, shared by its runs.
type recorded struct {
	rec   *prom.Recorded
	start time.Time
	// index numbers the cluster's nodes; has says which have series.
	index map[string]int
	has   []bool
	// note says what stands in for what, for the results.
	note string
}

// loadRecorded reads the scenario's measured section (nil without one)
// and checks that the file names at least one of the cluster's nodes.
func loadRecorded(s *scenario.Scenario, in *Inputs) (*recorded, error) {
	rec, start, err := s.Recorded()
	if err != nil || rec == nil {
		return nil, err
	}
	r := &recorded{rec: rec, start: start, index: make(map[string]int, len(in.Nodes)), has: make([]bool, len(in.Nodes))}
	inFile := map[string]bool{}
	for _, n := range rec.Nodes() {
		inFile[n] = true
	}
	matched := 0
	for i, n := range in.Nodes {
		r.index[n.Name] = i
		if inFile[n.Name] {
			r.has[i] = true
			matched++
		}
	}
	cfg := rec.Config()
	if matched == 0 {
		first := func(xs []string) string {
			if len(xs) > 5 {
				return strings.Join(xs[:5], ", ") + fmt.Sprintf(", ... (%d in all)", len(xs))
			}
			return strings.Join(xs, ", ")
		}
		var names []string
		for _, n := range in.Nodes {
			names = append(names, n.Name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("measured.file %s: no series names a node of the cluster in its %s label: the file has %s; the node list has %s",
			s.Measured.File, cfg.NodeLabel, first(rec.Nodes()), first(names))
	}
	first, last := rec.Span()
	r.note = fmt.Sprintf("Measured power: %s (%d series of %s, node label %s, %s scope) covers %d of the cluster's %d nodes, points from %s to %s; simulated time 0 is %s. "+
		"The power gate counts max(measured, estimated) for running tasks, as the PowerBudget plugin's measured mode; every power and energy figure reported is still the model's estimate.",
		s.Measured.File, rec.Series(), cfg.Metric, cfg.NodeLabel, cfg.Scope, matched, len(in.Nodes),
		first.Format(time.RFC3339), last.Format(time.RFC3339), start.Format(time.RFC3339))
	return r, nil
}

// meterRun gives one run's gate the readings at each decision's time and
// counts what they were, each node once per decision.
type meterRun struct {
	r   *recorded
	sum MeasuredSummary
	// gen numbers the decisions; seen[i] == gen when node i was looked
	// up in this one, with the answer in val[i].
	gen  uint32
	seen []uint32
	val  []lookup
}

type lookup struct {
	r  power.Reading
	ok bool
}

func (r *recorded) newRun() *meterRun {
	if r == nil {
		return nil
	}
	return &meterRun{r: r, sum: MeasuredSummary{Fallbacks: map[string]int{}}, seen: make([]uint32, len(r.has)), val: make([]lookup, len(r.has))}
}

// at is sim.Options.MeterAt.
func (m *meterRun) at(now job.Time) policy.Meter {
	m.gen++
	return &meterView{m: m, t: m.r.start.Add(time.Duration(now) * time.Millisecond), gen: m.gen}
}

// meterView is the readings at one decision.
type meterView struct {
	m   *meterRun
	t   time.Time
	gen uint32
}

// Reading implements policy.Meter.
func (v *meterView) Reading(node string) (power.Reading, bool) {
	m := v.m
	i, known := m.r.index[node]
	if !known {
		return power.Reading{}, false
	}
	if m.seen[i] == v.gen {
		return m.val[i].r, m.val[i].ok
	}
	var l lookup
	reason := prom.ReasonNoSeries
	if m.r.has[i] {
		l.r, reason, l.ok = m.r.rec.Check(node, v.t)
	}
	m.seen[i], m.val[i] = v.gen, l
	m.sum.Lookups++
	if l.ok {
		m.sum.Measured++
	} else {
		m.sum.Fallbacks[reason]++
	}
	return l.r, l.ok
}
