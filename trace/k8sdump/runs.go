package k8sdump

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/userfile"
)

// maxGPUIndex bounds a wattsched.io/gpu-index entry, as the plugins do
// (k8s/gpushare: 64 GPUs per node).
const maxGPUIndex = 63

// Run is one GPU pod that ran on a node: the GPUs it held, its share of
// each, and when.
type Run struct {
	Pod  string // namespace/name
	Node string
	// GPUs are the indices of wattsched.io/gpu-index; nil when the pod has
	// no such annotation (its GPUs are unknown).
	GPUs []int
	// Milli is the pod's share of each of its GPUs in thousandths: its
	// wattsched.io/gpu-milli, or 1000 for whole GPUs (nvidia.com/gpu).
	Milli int64
	// Start is status.startTime; End the latest
	// containerStatuses[].state.terminated.finishedAt of a pod that has
	// ended (Succeeded or Failed), zero while it runs.
	Start, End time.Time
}

// Runs are the GPU pods of a dump that ran or run, by node, and the nodes
// the dump knows (those of its Node items and those pods are bound to).
type Runs struct {
	nodes map[string][]Run
	// segs are, per node, the times at which its set of running pods
	// changes, each with the shares from then on (before the first: none).
	segs map[string][]segment
	// Runs are all runs, sorted by node, start, then pod name.
	Runs []Run
}

// segment is a span of a node's time with one set of running pods.
type segment struct {
	from    time.Time
	unknown bool          // a run with unknown GPUs is among them
	milli   map[int]int64 // per GPU, the sum of the runs' shares
}

// ReadRuns reads the pods of a `kubectl get pods -A -o json` dump (or a
// nodes and pods dump, as Read takes) as GPU runs. Pods not bound to a
// node, Pending ones, ones asking for no GPU and Failed ones that never
// started are not runs. A run needs status.startTime, and an ended one
// (Succeeded or Failed) its containers' finishedAt. Errors name the file,
// the item and the field.
func ReadRuns(r io.Reader, file string) (*Runs, error) {
	var l struct {
		Items []object `json:"items"`
	}
	r, err := userfile.Reader(r, file, userfile.Document)
	if err != nil {
		return nil, err
	}
	if err := json.NewDecoder(r).Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bad := func(i int, field string, err error) error {
		return fmt.Errorf("%s: items[%d].%s: %w", file, i, field, err)
	}
	rs := &Runs{nodes: map[string][]Run{}}
	for i, o := range l.Items {
		switch o.Kind {
		case "Node":
			if o.Metadata.Name == "" {
				return nil, bad(i, "metadata.name", fmt.Errorf("empty"))
			}
			if _, ok := rs.nodes[o.Metadata.Name]; !ok {
				rs.nodes[o.Metadata.Name] = nil
			}
		case "Pod":
			run, err := podRun(o)
			if err != nil {
				return nil, bad(i, err.field, err.err)
			}
			if o.Spec.NodeName != "" {
				if _, ok := rs.nodes[o.Spec.NodeName]; !ok {
					rs.nodes[o.Spec.NodeName] = nil
				}
			}
			if run != nil {
				rs.nodes[run.Node] = append(rs.nodes[run.Node], *run)
				rs.Runs = append(rs.Runs, *run)
			}
		}
	}
	if len(rs.nodes) == 0 {
		return nil, fmt.Errorf("%s: no Node items and no pod bound to a node (kubectl get pods -A -o json)", file)
	}
	sort.SliceStable(rs.Runs, func(a, b int) bool {
		x, y := rs.Runs[a], rs.Runs[b]
		if x.Node != y.Node {
			return x.Node < y.Node
		}
		if !x.Start.Equal(y.Start) {
			return x.Start.Before(y.Start)
		}
		return x.Pod < y.Pod
	})
	rs.segs = make(map[string][]segment, len(rs.nodes))
	for n, runs := range rs.nodes {
		rs.segs[n] = segments(runs)
	}
	return rs, nil
}

// segments cuts time where a run starts or ends: a run counts from its
// Start to its End inclusive, so it leaves 1 ns after End.
func segments(runs []Run) []segment {
	var cuts []time.Time
	for _, r := range runs {
		cuts = append(cuts, r.Start)
		if !r.End.IsZero() {
			cuts = append(cuts, r.End.Add(time.Nanosecond))
		}
	}
	slices.SortFunc(cuts, func(a, b time.Time) int { return a.Compare(b) })
	cuts = slices.CompactFunc(cuts, func(a, b time.Time) bool { return a.Equal(b) })
	segs := make([]segment, len(cuts))
	for i, c := range cuts {
		sg := segment{from: c, milli: map[int]int64{}}
		for _, r := range runs {
			if r.Start.After(c) || (!r.End.IsZero() && r.End.Before(c)) {
				continue
			}
			if r.GPUs == nil {
				sg.unknown = true
			}
			for _, g := range r.GPUs {
				sg.milli[g] += r.Milli
			}
		}
		segs[i] = sg
	}
	return segs
}

// podRun is the pod's GPU run, nil when it is not one.
func podRun(o object) (*Run, *fieldErr) {
	p, _, ferr := pod(o, nil)
	if ferr != nil {
		return nil, ferr
	}
	if p.Node == "" || p.Demand.GPUCount == 0 {
		return nil, nil
	}
	ended := false
	switch p.Phase {
	case "Running", "Unknown":
	case "Succeeded", "Failed":
		ended = true
	default: // Pending, or no phase: nothing runs yet
		return nil, nil
	}
	run := &Run{Pod: p.Name, Node: p.Node, Milli: p.Demand.GPUMilli}
	if o.Status.StartTime == "" {
		if p.Phase == "Failed" {
			return nil, nil // refused before it started
		}
		return nil, &fieldErr{"status.startTime", fmt.Errorf("missing on a %s pod: when it ran is unknown", p.Phase)}
	}
	t, ferr := parseTime("status.startTime", o.Status.StartTime)
	if ferr != nil {
		return nil, ferr
	}
	run.Start = t
	if ended {
		for k, c := range o.Status.ContainerStatuses {
			// The kubelet writes containers it never saw end (evictions,
			// ContainerStatusUnknown) as terminated with a null finishedAt.
			if c.State.Terminated == nil || c.State.Terminated.FinishedAt == "" {
				continue
			}
			f, ferr := parseTime(fmt.Sprintf("status.containerStatuses[%d].state.terminated.finishedAt", k), c.State.Terminated.FinishedAt)
			if ferr != nil {
				return nil, ferr
			}
			if f.After(run.End) {
				run.End = f
			}
		}
		if run.End.IsZero() {
			// When it ended is unknown (no container has a finishedAt): its
			// node's shares are unknown from its start on, and those
			// samples are left out like a GPU pod's without gpu-index.
			run.GPUs = nil
			return run, nil
		}
		if run.End.Before(run.Start) {
			return nil, &fieldErr{"status.containerStatuses", fmt.Errorf("finished %s before it started %s", run.End.Format(time.RFC3339), run.Start.Format(time.RFC3339))}
		}
	}
	if v, ok := o.Metadata.Annotations[AnnGPUIndex]; ok {
		gpus, err := gpuIndex(v, p.Demand)
		if err != nil {
			return nil, &fieldErr{"metadata.annotations[\"" + AnnGPUIndex + "\"]", err}
		}
		run.GPUs = gpus
	}
	return run, nil
}

// gpuIndex parses wattsched.io/gpu-index as the plugins write it
// (k8s/gpushare.FormatGPUIndex): comma-separated device indices, one per
// GPU the pod holds.
func gpuIndex(v string, d job.Demand) ([]int, error) {
	var gpus []int
	for _, f := range strings.Split(v, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 0 || g > maxGPUIndex {
			return nil, fmt.Errorf("%q: want comma-separated GPU indices 0..%d", v, maxGPUIndex)
		}
		if slices.Contains(gpus, g) {
			return nil, fmt.Errorf("%q: GPU %d twice", v, g)
		}
		gpus = append(gpus, g)
	}
	if len(gpus) != d.GPUCount {
		return nil, fmt.Errorf("%q: %d indices for a pod of %d GPU(s)", v, len(gpus), d.GPUCount)
	}
	return gpus, nil
}

// HasNode says whether the dump knows node: a Node item or a pod bound
// to it.
func (rs *Runs) HasNode(node string) bool {
	_, ok := rs.nodes[node]
	return ok
}

// Nodes are the nodes the dump knows, sorted.
func (rs *Runs) Nodes() []string {
	out := make([]string, 0, len(rs.nodes))
	for n := range rs.nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Share is the allocated share of GPU gpu of node at time at: the sum of
// the shares of the runs on that GPU that started at or before at and had
// not ended before it, capped at 1. ok is false when the node is unknown
// or a run whose GPUs are unknown (no wattsched.io/gpu-index) was on the
// node then.
func (rs *Runs) Share(node string, gpu int, at time.Time) (share float64, ok bool) {
	if _, known := rs.nodes[node]; !known {
		return 0, false
	}
	segs := rs.segs[node]
	i := sort.Search(len(segs), func(i int) bool { return segs[i].from.After(at) }) - 1
	if i < 0 {
		return 0, true // before any run
	}
	if segs[i].unknown {
		return 0, false
	}
	return min(float64(segs[i].milli[gpu])/job.MilliPerGPU, 1), true
}
