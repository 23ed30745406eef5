// Package plugins adapts wattsched's placement policies to the
// kube-scheduler framework: a GPU-sharing plugin (PreFilter, Filter,
// Reserve, PreBind) that keeps per-GPU state in pod annotations, score
// plugins that call the core scorers (PWR, FGD, BestFit, DotProd,
// GpuPacking, GpuClustering) unchanged, and a power-budget admission
// plugin. Combination is kube-scheduler's own: weighted score plugins in
// one profile.
package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"sigs.k8s.io/yaml"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
)

// shared is the state the plugins of one scheduling profile share: the
// hardware catalog, each node's state in the cluster model (rebuilt when
// its NodeInfo generation changes), the GPUs this scheduler reserved, and
// the GPU selector.
//
// A reservation is kept until its pod is deleted (or Unreserve drops it),
// not until the annotation shows up: the scheduler's cache may still hold
// the assumed pod without the annotation after the informer delivered it,
// and the reservation is what keeps the node state right meanwhile. A
// restarted scheduler has none and reads the annotations.
type shared struct {
	// recorder emits Events about pods that do not add up on their node
	// (nil in unit tests without a client).
	recorder events.EventRecorder
	reported map[string]bool // pod UID + reason already reported

	// nodes holds each NodeInfo's entry, keyed by the NodeInfo itself
	// (the snapshot keeps one per node, updated in place): the fast path
	// of every Filter and Score call, a node whose NodeInfo has not
	// changed, reads it without a lock or hashing the node's name.
	// stored counts the entries added since it was last cleared.
	nodes  sync.Map // fwk.NodeInfo -> *nodeEntry
	stored atomic.Int64

	// mu guards the fields below.
	mu       sync.RWMutex
	cat      *hw.Catalog
	pending  map[types.UID][]int
	selector policy.GPUSelector
	selMu    sync.Mutex
	// numNodes is the cluster's node count at the last PreFilter.
	numNodes int
	// states interns node states (stateKey): nodes in one state share an
	// id, and the score plugins and PowerBudget compute a pod's figures
	// once per state and cycle instead of once per node. Ids stay valid
	// until resetStates, which only PreFilter calls, between cycles.
	states map[string]int32
	// epoch counts the resets of states: ids from an earlier epoch must
	// not be compared with this one's.
	epoch uint64
	// scorers are the profile's score plugins (newScore adds them).
	scorers []*Score

	// seen are the nodes of the last PreFilter (metrics.go).
	seen seenNodes
}

// nodeEntry is one node's state in the cluster model, built from the
// NodeInfo of generation gen, with its state id.
type nodeEntry struct {
	gen   int64
	n     *cluster.Node
	err   error
	state int32
}

var (
	sharedMu  sync.Mutex
	sharedFor = map[fwk.Handle]*shared{}
)

// sharedState returns the profile's shared state, creating it (and its pod
// event handler) on first use.
func sharedState(h fwk.Handle) *shared {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s := sharedFor[h]; s != nil {
		return s
	}
	s := &shared{cat: hw.Default(), states: map[string]int32{}, pending: map[types.UID][]int{}, reported: map[string]bool{}, recorder: h.EventRecorder()}
	s.seen.profile = profileName(h)
	sharedFor[h] = s
	if f := h.SharedInformerFactory(); f != nil {
		_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if p, ok := obj.(*v1.Pod); ok {
					s.forget(p.UID)
				}
			},
		})
	}
	return s
}

// inconsistentPods counts the pods whose annotations or requests did not
// add up on their node, by node, pod and reason.
var inconsistentPods = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "wattsched",
	Name:           "inconsistent_pods_total",
	Help:           "Pods on a node whose annotations or requests do not add up (malformed, over capacity, impossible GPU indices); counted as well as wattsched can instead of failing the node.",
	StabilityLevel: metrics.ALPHA,
}, []string{"node", "pod", "reason"})

func init() { legacyregistry.MustRegister(inconsistentPods) }

// reportProblems emits one Event and one metric increment per pod and
// reason (not at every rebuild of the node).
func (s *shared) reportProblems(node *v1.Node, problems []gpushare.Problem) {
	for _, p := range problems {
		key := string(p.Pod.UID) + "\x00" + p.Reason
		s.mu.Lock()
		seen := s.reported[key]
		if !seen {
			if len(s.reported) > 10000 {
				clear(s.reported)
			}
			s.reported[key] = true
		}
		s.mu.Unlock()
		if seen {
			continue
		}
		name := p.Pod.Namespace + "/" + p.Pod.Name
		short := p.Reason
		if i := strings.IndexAny(short, ";:("); i > 0 {
			short = strings.TrimSpace(short[:i])
		}
		inconsistentPods.WithLabelValues(node.Name, name, short).Inc()
		klog.InfoS("wattsched: pod does not add up on its node; counted as well as possible", "pod", klog.KObj(p.Pod), "node", node.Name, "reason", p.Reason)
		if s.recorder != nil {
			s.recorder.Eventf(p.Pod, node, v1.EventTypeWarning, "WattschedInconsistentPod", "Scheduling",
				"on node %s: %s", node.Name, p.Reason)
		}
	}
}

func (s *shared) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.pending, uid)
	s.mu.Unlock()
}

func (s *shared) reserve(uid types.UID, gpus []int) {
	s.mu.Lock()
	s.pending[uid] = gpus
	s.mu.Unlock()
}

// node returns ni's state in the cluster model. The result is shared and
// must not be modified.
func (s *shared) node(ni fwk.NodeInfo) (*cluster.Node, error) {
	e, err := s.entry(ni)
	if err != nil {
		return nil, err
	}
	return e.n, e.err
}

// entry returns ni's entry, rebuilding it when ni's generation changed.
// err is set when ni has no node; the entry's own err when the node
// cannot be modelled.
func (s *shared) entry(ni fwk.NodeInfo) (*nodeEntry, error) {
	node := ni.Node()
	if node == nil {
		return nil, fmt.Errorf("node not found")
	}
	gen := ni.GetGeneration()
	if v, ok := s.nodes.Load(ni); ok {
		if e := v.(*nodeEntry); e.gen == gen {
			return e, nil
		}
	}
	s.mu.Lock()
	cat := s.cat
	pods := ni.GetPods()
	allocs := make([]gpushare.Allocation, 0, len(pods))
	for _, pi := range pods {
		// A reservation of this scheduler wins over an annotation the
		// pod may carry from before (PreBind overwrites it).
		p := pi.GetPod()
		gpus, reserved := s.pending[p.UID]
		var ierr error
		if !reserved {
			gpus, _, ierr = gpushare.GPUIndex(p)
		}
		allocs = append(allocs, gpushare.Allocation{Pod: p, GPUs: gpus, IndexErr: ierr})
	}
	s.mu.Unlock()
	n, problems, err := gpushare.BuildNode(cat, node, allocs)
	s.reportProblems(node, problems)
	key := ""
	if err == nil {
		key = stateKey(n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stored.Load() > int64(2*s.numNodes+64) {
		// Entries of deleted nodes and of NodeInfos cloned for
		// preemption linger; start afresh now and then.
		s.nodes.Clear()
		s.stored.Store(0)
	}
	id, ok := s.states[key]
	if !ok {
		id = int32(len(s.states))
		s.states[key] = id
	}
	e := &nodeEntry{gen: gen, n: n, err: err, state: id}
	if _, replaced := s.nodes.Swap(ni, e); !replaced {
		s.stored.Add(1)
	}
	return e, nil
}

// numStates is the number of state ids handed out (ids are 0..numStates-1).
func (s *shared) numStates() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.states)
}

// resetStates forgets the interned states once they far outnumber the
// nodes (states that no node is in any more accumulate as pods come and
// go), and the entries holding their ids; nodes are rebuilt as they are
// next seen. It runs at PreFilter, before any plugin of the cycle reads
// an id.
func (s *shared) resetStates(numNodes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.numNodes = numNodes
	if len(s.states) > 8*numNodes+1024 {
		clear(s.states)
		s.nodes.Clear()
		s.stored.Store(0)
		s.epoch++
	}
}

// stateEpoch is the number of resets of the state ids so far.
func (s *shared) stateEpoch() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.epoch
}

// stateKey identifies everything about n that a scorer, a GPU selector
// or the power model can read: every field of cluster.Node but its ID,
// Name and Version (TestStateKeyCoversNode fails when a field is added
// to cluster.Node), with the GPU and CPU models by value (per-node power
// overrides make copies of them). Two nodes with the same key get the same
// score, GPUs and power from every deterministic scorer that does not
// look at the node's identity, which none does.
func stateKey(n *cluster.Node) string {
	b := make([]byte, 0, 256)
	b = fmt.Appendf(b, "%q|%d|%d|%d|%d|%d|%v|%d|", n.GPUModel, n.CPUMilli, n.MemMiB, n.FreeCPUMilli, n.FreeMemMiB, n.State, n.Affinity, n.Tasks)
	for _, g := range n.GPUFree {
		b = strconv.AppendInt(b, g, 10)
		b = append(b, ',')
	}
	if n.GPU != nil {
		b = fmt.Appendf(b, "|gpu %#v", *n.GPU)
	}
	if n.CPU != nil {
		b = fmt.Appendf(b, "|cpu %#v", *n.CPU)
	}
	return string(b)
}

// cycleKey holds the pod's demand in the CycleState.
const cycleKey fwk.StateKey = gpushare.Prefix + "demand"

// cycleData is the pod being scheduled as a core task.
type cycleData struct {
	task job.Task
	err  error
	// gpus are the GPUs Reserve picked.
	gpus []int
	// placed is what PostBind counts (Reserve sets it).
	placed *placement
}

// Clone implements fwk.StateData; the data is not modified after PreFilter
// except by Reserve, which runs once per cycle.
func (c *cycleData) Clone() fwk.StateData { return c }

// demand returns the pod's task, computing it once per cycle.
func demand(state fwk.CycleState, pod *v1.Pod) *cycleData {
	if d, err := state.Read(cycleKey); err == nil {
		if cd, ok := d.(*cycleData); ok {
			return cd
		}
	}
	d, err := gpushare.Demand(pod)
	kind, ref, werr := gpushare.Work(pod)
	if err == nil {
		err = werr
	}
	if err != nil {
		err = fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	cd := &cycleData{task: job.Task{ID: 0, Name: pod.Name, Kind: kind, RefGPU: ref, Demand: d, Class: -1}, err: err}
	state.Write(cycleKey, cd)
	return cd
}

// decode reads a plugin's arguments strictly (an unknown field is an error).
func decode(obj runtime.Object, into any) error {
	if obj == nil {
		return nil
	}
	u, ok := obj.(*runtime.Unknown)
	if !ok {
		return fmt.Errorf("want arguments of type runtime.Unknown, got %T", obj)
	}
	if len(u.Raw) == 0 {
		return nil
	}
	raw := u.Raw
	if u.ContentType == runtime.ContentTypeYAML {
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return err
		}
		raw = j
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// loadCatalog reads a hardware catalog file (the format of the core's
// hw/catalog.yaml).
func loadCatalog(path string) (*hw.Catalog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := hw.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
