package replay

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
)

// Reasons a pod's placement differs between the simulator and
// kube-scheduler, found by asking the core Placer about the cluster as
// kube-scheduler saw it when it bound the pod.
const (
	// ReasonTie: the node kube-scheduler chose is one of the core's
	// equally best nodes on that state; kube-scheduler breaks ties at
	// random, the simulator takes the lowest node index.
	ReasonTie = "tie"
	// ReasonState: on that state the core picks exactly kube-scheduler's
	// node; the simulator placed the pod elsewhere because its cluster was
	// not in the same state then (an earlier tie broken otherwise, or
	// pods that started or finished at other times).
	ReasonState = "state"
	// ReasonSnapshot: the core's best nodes on that state do not include
	// kube-scheduler's node, but they do on a state that differs from it
	// only by what the watch saw while the pod was being scheduled:
	// kube-scheduler scores the snapshot of its cache it takes when the
	// pod's scheduling cycle starts, so pods whose finish the watch saw
	// between the pod's creation and its bind may still have held their
	// resources there, and pods queued ahead of it were bound (assumed)
	// there although the watch saw their binds after the pod's
	// (kube-scheduler binds asynchronously). The states tried are the
	// snapshots at each time in that window (snapshotStates).
	ReasonSnapshot = "snapshot"
	// ReasonPlugin: the core's best nodes include kube-scheduler's node on
	// none of those states: a kube-scheduler plugin of its own (filters,
	// queueing) decided otherwise.
	ReasonPlugin = "plugin"
	// ReasonStarted: the pod started in one run and not in the other.
	ReasonStarted = "started"
	// ReasonGangPartial: the pod is one of a gang that kube-scheduler
	// bound in part (a scheduler without a gang mechanism binds each pod
	// on its own); the accounting, as the simulator, starts a gang only
	// whole, so the gang's pods did not start in the observed run.
	ReasonGangPartial = "gang_partial"
	// ReasonUnknown: the state kube-scheduler saw could not be rebuilt
	// from this process's watch (it saw a pod finish after a bind that
	// reused its resources).
	ReasonUnknown = "unknown"
)

// PodDiff is one pod placed differently.
type PodDiff struct {
	Task    string `json:"task"`
	SimNode string `json:"sim_node"`
	K8sNode string `json:"k8s_node"`
	Reason  string `json:"reason"`
}

// Parity compares one policy's kube-scheduler replay with the
// simulator's run of the same scenario.
type Parity struct {
	Policy string `json:"policy"`
	Pods   int    `json:"pods"`
	// Placed is the number of pods started in both; SameNode of them on
	// the same node (the simulator's results name nodes, not GPUs).
	Placed    int     `json:"placed_in_both"`
	SameNode  int     `json:"same_node"`
	SameShare float64 `json:"same_node_share"`
	// SameKind counts the pods on the same node or on a node of the same
	// kind (GPU model and count, CPU, memory): kube-scheduler's random
	// choice among identical empty nodes is the same placement for the
	// power model.
	SameKind      int     `json:"same_node_kind"`
	SameKindShare float64 `json:"same_node_kind_share"`
	// Differences by reason (ReasonTie, ...), and the pods.
	Reasons map[string]int `json:"reasons"`
	Diffs   []PodDiff      `json:"differences"`
	// Energy in kWh and the relative difference (k8s - sim) / sim.
	SimKWh    float64 `json:"sim_energy_kwh"`
	K8sKWh    float64 `json:"k8s_energy_kwh"`
	EnergyRel float64 `json:"energy_rel_diff"`
	// Mean waits in simulated seconds over the pods started in both runs.
	SimWaitS float64 `json:"sim_mean_wait_s"`
	K8sWaitS float64 `json:"k8s_mean_wait_s"`
	// BindLatencyMS is the wall-clock delay from a pod's creation to its
	// bind, for the pods that started at once in the simulator: the
	// median and the maximum. Times the factor it is the extra wait the
	// replay adds in simulated time.
	BindLatencyP50MS float64 `json:"bind_latency_p50_ms"`
	BindLatencyMaxMS float64 `json:"bind_latency_max_ms"`
	// LongerWaits counts pods that waited in the simulator or waited more
	// than one second of wall-clock time in kube-scheduler: queueing,
	// kube-scheduler's one-second backoff and the order in which it
	// retries pods.
	LongerWaits int     `json:"waits_beyond_latency"`
	Factor      float64 `json:"time_factor"`
	// Gangs is what happened to the gang jobs (nil without gangs).
	Gangs *GangParity `json:"gangs,omitempty"`
}

// Compare builds the parity of one policy: simRun is the simulator's run,
// pr the replay through kube-scheduler (with Account done).
func Compare(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, ps *scenario.PolicySpec, simRun *tasks.ReplayRun, pr *PolicyRun, factor float64) (*Parity, error) {
	p := &Parity{Policy: ps.Name, Pods: len(in.Pods), Reasons: map[string]int{}, Factor: factor}
	sr, kr := simRun.Result, pr.Run.Result
	simT, k8sT := map[job.ID]int{}, map[job.ID]int{}
	for i, t := range sr.Tasks {
		simT[t.ID] = i
	}
	for i, t := range kr.Tasks {
		k8sT[t.ID] = i
	}
	newPlacer := placerFor(env, ps, in)
	if _, err := newPlacer(); err != nil {
		return nil, err
	}
	var lat []float64
	var simWait, k8sWait float64
	gs := gangsOf(in.Pods)
	gp, partial := gangParity(in, pr)
	p.Gangs = gp
	for k := range in.Pods {
		t := &in.Pods[k]
		st, kt := sr.Tasks[simT[t.ID]], kr.Tasks[k8sT[t.ID]]
		ob := pr.Pods[k]
		sn, kn := nodeName(in, st.Node), nodeName(in, kt.Node)
		if (st.Start >= 0) != (kt.Start >= 0) {
			why := ReasonStarted
			if partial[t.Gang] {
				why = ReasonGangPartial
			}
			p.Reasons[why]++
			p.Diffs = append(p.Diffs, PodDiff{Task: t.Name, SimNode: sn, K8sNode: kn, Reason: why})
			continue
		}
		if st.Start < 0 {
			continue
		}
		p.Placed++
		simWait += float64(st.Start-st.Submit) / 1000
		k8sWait += float64(kt.Start-kt.Submit) / 1000
		created := pr.Start.Add(time.Duration(float64(gs.createAt(t)) / factor * float64(time.Millisecond)))
		if l := float64(ob.Bound.Sub(created)) / float64(time.Millisecond); st.Start == gs.createAt(t) && l <= 1000 {
			lat = append(lat, l)
		} else {
			p.LongerWaits++
		}
		if in.Nodes[st.Node].GPUModel == in.Nodes[kt.Node].GPUModel && in.Nodes[st.Node].GPUs == in.Nodes[kt.Node].GPUs &&
			in.Nodes[st.Node].CPUMilli == in.Nodes[kt.Node].CPUMilli && in.Nodes[st.Node].MemMiB == in.Nodes[kt.Node].MemMiB {
			p.SameKind++
		}
		if sn == kn {
			p.SameNode++
			continue
		}
		why, err := reason(in, pr, newPlacer, k, kt.Node, factor)
		if err != nil {
			return nil, err
		}
		p.Reasons[why]++
		p.Diffs = append(p.Diffs, PodDiff{Task: t.Name, SimNode: sn, K8sNode: kn, Reason: why})
	}
	if p.Placed > 0 {
		p.SameShare = float64(p.SameNode) / float64(p.Placed)
		p.SameKindShare = float64(p.SameKind) / float64(p.Placed)
		p.SimWaitS, p.K8sWaitS = simWait/float64(p.Placed), k8sWait/float64(p.Placed)
	}
	p.SimKWh = float64(sr.CPUEnergy+sr.GPUEnergy) / 3.6e6
	p.K8sKWh = float64(kr.CPUEnergy+kr.GPUEnergy) / 3.6e6
	if p.SimKWh > 0 {
		p.EnergyRel = (p.K8sKWh - p.SimKWh) / p.SimKWh
	}
	if len(lat) > 0 {
		sort.Float64s(lat)
		p.BindLatencyP50MS, p.BindLatencyMaxMS = lat[len(lat)/2], lat[len(lat)-1]
	}
	return p, nil
}

func nodeName(in *tasks.Inputs, id cluster.NodeID) string {
	if id < 0 {
		return ""
	}
	return in.Nodes[id].Name
}

// stateAt is the cluster as kube-scheduler saw it when it bound pod k, as
// this process's watch saw it: the pods bound before k and not yet
// finished when k was bound, on their observed nodes and GPUs
// (kube-scheduler frees a pod's resources when it turns Succeeded, before
// it is deleted), and the pods in extra. ok is false when the watch saw a
// finish after a bind that reused its resources.
func stateAt(in *tasks.Inputs, pr *PolicyRun, k int, extra ...int) (c *cluster.Cluster, ok bool, err error) {
	c, err = cluster.New(placerCatalog(), in.Nodes)
	if err != nil {
		return nil, false, err
	}
	byName := map[string]cluster.NodeID{}
	for _, n := range c.Nodes {
		byName[n.Name] = n.ID
	}
	at := pr.Pods[k].Bound
	var before []int
	for j, ob := range pr.Pods {
		if j != k && !ob.Bound.IsZero() && ob.Bound.Before(at) && (ob.Finished.IsZero() || ob.Finished.After(at)) {
			before = append(before, j)
		}
	}
	slices.SortFunc(before, func(a, b int) int { return pr.Pods[a].Bound.Compare(pr.Pods[b].Bound) })
	for _, j := range append(before, extra...) {
		if err := c.Allocate(&in.Pods[j], byName[pr.Pods[j].Node], pr.Pods[j].GPUs); err != nil {
			return c, false, nil
		}
	}
	return c, true, nil
}

// created is when pod k was created: as recorded, or (in an
// observed.json from before the replay recorded it) when it was due.
func created(in *tasks.Inputs, pr *PolicyRun, k int, factor float64) time.Time {
	if c := pr.Pods[k].Created; !c.IsZero() {
		return c
	}
	return pr.Start.Add(time.Duration(float64(gangsOf(in.Pods).createAt(&in.Pods[k])) / factor * float64(time.Millisecond)))
}

// snapshotStates are the pods to add to stateAt(k) for the snapshots
// kube-scheduler may have scored pod k on, earliest last: the pods
// created before k (kube-scheduler's queue is in creation order) whose
// bind the watch saw after k's but within k's scheduling window (from its
// creation to its bind) after it, which kube-scheduler had assumed before
// k's cycle; and, for a snapshot taken at a time in that window, also the
// pods whose finish the watch saw between that time and k's bind.
func snapshotStates(in *tasks.Inputs, pr *PolicyRun, k int, factor float64) [][]int {
	at, from := pr.Pods[k].Bound, created(in, pr, k, factor)
	ahead := func(j int) bool {
		cj, ck := created(in, pr, j, factor), created(in, pr, k, factor)
		return cj.Before(ck) || cj.Equal(ck) && (in.Pods[j].Submit < in.Pods[k].Submit || in.Pods[j].Submit == in.Pods[k].Submit && j < k)
	}
	var late, done []int
	for j, ob := range pr.Pods {
		switch {
		case j == k || ob.Bound.IsZero():
		case !ob.Bound.Before(at) && !ob.Bound.After(at.Add(at.Sub(from))) && ahead(j):
			late = append(late, j)
		case ob.Bound.Before(at) && !ob.Finished.IsZero() && !ob.Finished.After(at) && ob.Finished.After(from):
			done = append(done, j)
		}
	}
	slices.SortFunc(done, func(a, b int) int { return pr.Pods[b].Finished.Compare(pr.Pods[a].Finished) })
	out := [][]int{late}
	for r := 1; r <= len(done); r++ {
		out = append(out, append(slices.Clone(late), done[:r]...))
	}
	return out
}

// placerFor returns a builder of fresh core Placers for policy ps, as the
// simulator builds its Placer, for reason.
func placerFor(env *experiment.Env, ps *scenario.PolicySpec, in *tasks.Inputs) func() (*policy.Placer, error) {
	return func() (*policy.Placer, error) {
		return tasks.BuildPlacer(env.Registries, ps, policy.Deps{Catalog: env.Catalog, Power: power.PWR{}, Workload: in.Pods})
	}
}

// reason explains why pod k went to node got in kube-scheduler and
// elsewhere in the simulator: the core Placer's best nodes on the cluster
// as kube-scheduler saw it (stateAt), and where they do not include got,
// on the snapshots kube-scheduler may have scored k on (snapshotStates).
// newPlacer builds a fresh Placer for each state: a Placer caches scores
// by node and node Version, and the nodes of two rebuilt clusters have
// equal Versions in different states.
func reason(in *tasks.Inputs, pr *PolicyRun, newPlacer func() (*policy.Placer, error), k int, got cluster.NodeID, factor float64) (string, error) {
	top, ok, err := topAt(in, pr, newPlacer, k)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return ReasonUnknown, nil
	case len(top) == 1 && top[0] == got:
		return ReasonState, nil
	case slices.Contains(top, got):
		return ReasonTie, nil
	}
	for _, extra := range snapshotStates(in, pr, k, factor) {
		top, ok, err := topAt(in, pr, newPlacer, k, extra...)
		if err != nil {
			return "", err
		}
		if ok && slices.Contains(top, got) {
			return ReasonSnapshot, nil
		}
	}
	return ReasonPlugin, nil
}

// topAt is the core's best nodes for pod k on stateAt(k, extra...); ok
// is false when that state could not be rebuilt.
func topAt(in *tasks.Inputs, pr *PolicyRun, newPlacer func() (*policy.Placer, error), k int, extra ...int) ([]cluster.NodeID, bool, error) {
	c, ok, err := stateAt(in, pr, k, extra...)
	if err != nil || !ok {
		return nil, false, err
	}
	placer, err := newPlacer()
	if err != nil {
		return nil, false, err
	}
	top, _, _ := placer.Top(&in.Pods[k], c)
	return top, true, nil
}

// Text is the parity as lines for the terminal and parity.txt.
func (p *Parity) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s: %d pods, %d started in both; same node %d (%.1f%%), same kind of node %d (%.1f%%)\n",
		p.Policy, p.Pods, p.Placed, p.SameNode, 100*p.SameShare, p.SameKind, 100*p.SameKindShare)
	fmt.Fprintf(&b, "  energy: simulator %.3f kWh, kube-scheduler %.3f kWh (%+.3f%%)\n", p.SimKWh, p.K8sKWh, 100*p.EnergyRel)
	fmt.Fprintf(&b, "  mean wait: simulator %.1f s, kube-scheduler %.1f s (simulated seconds; time x%g)\n", p.SimWaitS, p.K8sWaitS, p.Factor)
	fmt.Fprintf(&b, "  bind latency (wall clock, pods that started at once in the simulator): median %.0f ms, max %.0f ms = %.0f s and %.0f s simulated\n",
		p.BindLatencyP50MS, p.BindLatencyMaxMS, p.BindLatencyP50MS*p.Factor/1000, p.BindLatencyMaxMS*p.Factor/1000)
	fmt.Fprintf(&b, "  pods waiting beyond that latency (queueing, kube-scheduler's 1 s backoff, retry order): %d\n", p.LongerWaits)
	if g := p.Gangs; g != nil {
		fmt.Fprintf(&b, "  gangs: %d, bound whole %d (first to last bind at most %.0f ms apart), bound in part %d, not bound %d\n",
			g.Gangs, g.Whole, g.BindSpreadMaxMS, g.Partial, g.None)
	}
	keys := make([]string, 0, len(p.Reasons))
	for r := range p.Reasons {
		keys = append(keys, r)
	}
	sort.Strings(keys)
	for _, r := range keys {
		fmt.Fprintf(&b, "  placed differently, %s: %d (%s)\n", r, p.Reasons[r], reasonText[r])
	}
	return b.String()
}

var reasonText = map[string]string{
	ReasonTie:         "kube-scheduler's node is one of the core's equally best nodes on the state it saw; it breaks ties at random, the simulator by node index",
	ReasonState:       "on the state kube-scheduler saw the core picks the same node; the simulator's state differed (earlier ties, start and finish times)",
	ReasonSnapshot:    "not among the core's best nodes on the state the watch saw at the bind, but among them on a snapshot kube-scheduler may have scored: finishes it had not yet seen, binds of pods queued ahead that the watch saw later",
	ReasonPlugin:      "not among the core's best nodes on any state kube-scheduler may have seen: kube-scheduler's own filters or queueing",
	ReasonStarted:     "started in one run only",
	ReasonGangPartial: "a pod of a gang kube-scheduler bound in part (no gang mechanism in the scheduler): a gang starts only whole, so it did not start in the observed run",
	ReasonUnknown:     "the state kube-scheduler saw could not be rebuilt from the watch's event times",
}
