package replay

import (
	"cmp"
	"slices"
	"time"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// A gang job (pods with job.Task.Gang) is replayed as the simulator runs
// it: its pods are created together, when its last pod arrives (the
// simulator's gang is whole then), each labelled with the gang
// (plugins.LabelPodGroup), and each runs for the gang's longest duration
// (the simulator ends a gang's pods together, when the slowest would
// finish). Binding them all or none is the scheduler's gang mechanism's
// (docs/kubernetes.md, "Gangs"); the accounting starts a gang only when
// all its pods were bound, and the parity says which gangs were bound in
// part.

// gangs holds each gang's arrival and duration.
type gangs struct {
	arrive map[string]job.Time
	work   map[string]float64
}

func gangsOf(pods []job.Task) gangs {
	g := gangs{arrive: map[string]job.Time{}, work: map[string]float64{}}
	for i := range pods {
		t := &pods[i]
		if t.Gang == "" {
			continue
		}
		g.arrive[t.Gang] = max(g.arrive[t.Gang], t.Submit)
		g.work[t.Gang] = max(g.work[t.Gang], t.Work)
	}
	return g
}

// createAt is when the replay creates t's pod, in simulated time: its
// arrival, or its gang's.
func (g gangs) createAt(t *job.Task) job.Time {
	if t.Gang != "" {
		return g.arrive[t.Gang]
	}
	return t.Submit
}

// runFor is how long t's pod runs in simulated seconds: its duration, or
// its gang's.
func (g gangs) runFor(t *job.Task) float64 {
	if t.Gang != "" {
		return g.work[t.Gang]
	}
	return t.Work
}

// startGangs adds to out a policy.StartGang for each gang all of whose
// pods are queued (in the accounting a pod arrives when it was bound) and
// free to start on their observed nodes and GPUs (take places one and
// reports whether it could); taken collects the pods placed.
func startGangs(queue []*job.Task, take func(t *job.Task) (policy.Start, bool), release func(t *job.Task), out []policy.Action, taken []*job.Task) ([]policy.Action, []*job.Task) {
	by := map[string][]*job.Task{}
	var names []string
	for _, t := range queue {
		if t.Gang == "" {
			continue
		}
		if _, ok := by[t.Gang]; !ok {
			names = append(names, t.Gang)
		}
		by[t.Gang] = append(by[t.Gang], t)
	}
	slices.Sort(names)
	for _, g := range names {
		ms := by[g]
		if len(ms) < ms[0].GangSize {
			continue
		}
		var starts []policy.Start
		var got []*job.Task
		for _, t := range ms {
			s, ok := take(t)
			if !ok {
				break
			}
			starts, got = append(starts, s), append(got, t)
		}
		if len(got) < len(ms) {
			for _, t := range got {
				release(t)
			}
			continue
		}
		out, taken = append(out, policy.StartGang{Gang: g, Pods: starts}), append(taken, got...)
	}
	return out, taken
}

// GangParity is what happened to the gangs in kube-scheduler.
type GangParity struct {
	// Gangs is the number of gang jobs; Whole of them had every pod
	// bound, Partial some but not all (a scheduler without a gang
	// mechanism binds each pod on its own), None no pod.
	Gangs   int `json:"gangs"`
	Whole   int `json:"bound_whole"`
	Partial int `json:"bound_in_part"`
	None    int `json:"bound_none"`
	// BindSpreadMaxMS is the largest wall-clock time between the first
	// and the last bind of a wholly bound gang's pods.
	BindSpreadMaxMS float64 `json:"bind_spread_max_ms"`
	// PartialGangs names the gangs bound in part.
	PartialGangs []string `json:"partial,omitempty"`
}

// gangParity sums up the gangs of in as pr observed them; partial is the
// set of gangs bound in part.
func gangParity(in *tasks.Inputs, pr *PolicyRun) (*GangParity, map[string]bool) {
	type seen struct {
		pods, bound int
		first, last time.Time
	}
	by := map[string]*seen{}
	for k := range in.Pods {
		g := in.Pods[k].Gang
		if g == "" {
			continue
		}
		s := by[g]
		if s == nil {
			s = &seen{}
			by[g] = s
		}
		s.pods++
		if b := pr.Pods[k].Bound; !b.IsZero() {
			s.bound++
			if s.first.IsZero() || b.Before(s.first) {
				s.first = b
			}
			if b.After(s.last) {
				s.last = b
			}
		}
	}
	if len(by) == 0 {
		return nil, nil
	}
	gp := &GangParity{Gangs: len(by)}
	partial := map[string]bool{}
	names := make([]string, 0, len(by))
	for g := range by {
		names = append(names, g)
	}
	slices.SortFunc(names, cmp.Compare)
	for _, g := range names {
		s := by[g]
		switch {
		case s.bound == s.pods:
			gp.Whole++
			gp.BindSpreadMaxMS = max(gp.BindSpreadMaxMS, float64(s.last.Sub(s.first))/float64(time.Millisecond))
		case s.bound == 0:
			gp.None++
		default:
			gp.Partial++
			partial[g] = true
			gp.PartialGangs = append(gp.PartialGangs, g)
		}
	}
	return gp, partial
}
