// Package replay replays a wattsched replay scenario through the real
// kube-scheduler: a kube-apiserver started as the integration tests start
// it, the scenario's nodes as fake GPU nodes whose pods kwok
// (sigs.k8s.io/kwok) runs and completes, each pod created at its arrival
// time and running for its duration with time compressed by a factor, and
// kube-scheduler 1.34 with wattsched's plugins binding them. The observed
// placements and start times go through the core simulator's replay
// accounting (same power model, same jobs.csv and summary.json as
// `wattsched run`), and a parity report compares them with the
// simulator's own run of the scenario.
package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/plugins"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// Options configure a replay.
type Options struct {
	// Factor is the time compression: simulated seconds per wall-clock
	// second (100: a 100 s pod runs for 1 s).
	Factor float64
	// Log, if set, receives progress lines.
	Log func(format string, args ...any)
	// Settle is how long (wall clock) the replay waits, once every pod is
	// created and none runs, for a pending pod to be bound before it
	// counts the rest as never started (default 3 s).
	Settle time.Duration
	// Explain turns on the score plugins' explain mode: each pod's
	// wattsched.io/explain-<plugin> annotations (kube-scheduler's raw and
	// normalised scores of the chosen node and the runners-up) are kept in
	// Observed.Explain, and the parity compares them with the core's
	// scores on the rebuilt state. It adds one API patch per plugin and pod.
	Explain bool
	// DefaultScheduler runs kube-scheduler's default profile
	// (default-scheduler, none of wattsched's plugins) instead of the
	// policy's, and the pods name it: a cluster's own scheduler, which
	// records no GPU indices (Account best-fits them). The shadow's test
	// watches such a cluster.
	DefaultScheduler bool
	// Started, if set, is called with the API server's client once the
	// nodes, kwok and the scheduler run, before the first pod is created.
	Started func(cs clientset.Interface, rc *rest.Config) error
}

// Observed is what happened to one pod in the cluster.
type Observed struct {
	Node string `json:"node,omitempty"`
	GPUs []int  `json:"gpus,omitempty"`
	// Created is when the replay asked the API server to create the pod;
	// Bound, Finished and Deleted are the wall-clock times the replay saw
	// the pod bound, Succeeded and deleted (zero: never).
	Created  time.Time `json:"created"`
	Bound    time.Time `json:"bound"`
	Finished time.Time `json:"finished"`
	Deleted  time.Time `json:"deleted"`
	// Explain is each score plugin's explanation of the bind, by plugin
	// name (Options.Explain only).
	Explain map[string]*plugins.Explanation `json:"explain,omitempty"`
}

// PolicyRun is one policy's replay through kube-scheduler.
type PolicyRun struct {
	Policy string `json:"policy"`
	// Start is wall-clock time zero of the replay (simulated time 0).
	Start time.Time  `json:"start"`
	Pods  []Observed `json:"pods"`
	// Run is the observed replay through the simulator's accounting.
	Run *tasks.ReplayRun `json:"-"`
}

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// simMS is wall-clock time w in simulated milliseconds since start.
func simMS(w, start time.Time, factor float64) job.Time {
	return job.Time(math.Ceil(float64(w.Sub(start)) / float64(time.Millisecond) * factor))
}

// RunPolicy replays in.Pods under the scenario's policy i: a fresh API
// server, the nodes, kwok and the scheduler, then every pod at its
// arrival. It returns when every pod has finished or, with every pod
// created and none running, the pending ones stay unbound for Settle.
func RunPolicy(tb testing.TB, s *scenario.Scenario, in *tasks.Inputs, i int, o Options) (*PolicyRun, error) {
	if o.Settle <= 0 {
		o.Settle = 3 * time.Second
	}
	cs, rc := apiServer(tb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, n := range in.Nodes {
		if _, err := cs.CoreV1().Nodes().Create(ctx, nodeObject(n), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	if err := startKwok(ctx, cs); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "wattsched-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfgFile := filepath.Join(dir, "scheduler-config.yaml")
	cfg := SchedulerConfig(s, o.Explain)
	if o.DefaultScheduler {
		cfg = defaultSchedulerConfig
	}
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	stop, err := startScheduler(cs, rc, cfgFile)
	if err != nil {
		return nil, err
	}
	defer stop()
	if o.Started != nil {
		if err := o.Started(cs, rc); err != nil {
			return nil, err
		}
	}

	w := newWatcher(cs, len(in.Pods))
	if o.Explain {
		for _, sc := range s.Policies[i].Scorers {
			w.scorers = append(w.scorers, plugin[sc.Policy])
		}
	}
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	order := make([]int, len(in.Pods))
	for k := range order {
		order[k] = k
	}
	gs := gangsOf(in.Pods)
	sort.SliceStable(order, func(a, b int) bool { return gs.createAt(&in.Pods[order[a]]) < gs.createAt(&in.Pods[order[b]]) })
	sched := schedulerName(i)
	if o.DefaultScheduler {
		sched = v1.DefaultSchedulerName
	}
	// Wall-clock readings only (Round(0) drops the monotonic one), so that
	// the times compare the same once read back from observed.json.
	start := time.Now().Round(0).Add(500 * time.Millisecond)
	o.logf("policy %s: %d pods on %d kwok nodes, time x%g", s.Policies[i].Name, len(in.Pods), len(in.Nodes), o.Factor)
	for _, k := range order {
		t := &in.Pods[k]
		at := start.Add(time.Duration(float64(gs.createAt(t)) / o.Factor * float64(time.Millisecond)))
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		runFor := time.Duration(gs.runFor(t) / o.Factor * float64(time.Second))
		w.creating(k)
		if _, err := cs.CoreV1().Pods(Namespace).Create(ctx, podObject(t, podName(k), sched, runFor), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("pod %s (%s): %w", podName(k), t.Name, err)
		}
		w.created()
	}
	if err := w.wait(o.Settle); err != nil {
		return nil, err
	}
	return &PolicyRun{Policy: s.Policies[i].Name, Start: start, Pods: w.snapshot()}, nil
}

func podName(k int) string { return fmt.Sprintf("task-%06d", k) }

// watcher records when each pod is bound and finishes, and deletes
// finished pods (as a Job's TTL would) so that kube-scheduler frees their
// resources.
type watcher struct {
	cs clientset.Interface
	// scorers are the score plugins whose explanations a bind carries.
	scorers []string
	mu      sync.Mutex
	pods    []Observed
	made    int
	running int
	done    int
	errs    []error
	change  chan struct{}
}

func newWatcher(cs clientset.Interface, n int) *watcher {
	return &watcher{cs: cs, pods: make([]Observed, n), change: make(chan struct{}, 1)}
}

func (w *watcher) poke() {
	select {
	case w.change <- struct{}{}:
	default:
	}
}

// creating records that pod k is being created now.
func (w *watcher) creating(k int) {
	w.mu.Lock()
	w.pods[k].Created = time.Now().Round(0)
	w.mu.Unlock()
}

func (w *watcher) created() {
	w.mu.Lock()
	w.made++
	w.mu.Unlock()
	w.poke()
}

func (w *watcher) start(ctx context.Context) error {
	f := informers.NewSharedInformerFactoryWithOptions(w.cs, 0, informers.WithNamespace(Namespace))
	inf := f.Core().V1().Pods().Informer()
	see := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		now := time.Now().Round(0)
		var k int
		if _, err := fmt.Sscanf(p.Name, "task-%06d", &k); err != nil || k < 0 || k >= len(w.pods) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		ob := &w.pods[k]
		if p.Spec.NodeName != "" && ob.Bound.IsZero() {
			ob.Bound, ob.Node = now, p.Spec.NodeName
			gpus, _, err := gpushare.GPUIndex(p)
			if err != nil {
				w.errs = append(w.errs, fmt.Errorf("pod %s: %w", p.Name, err))
			}
			ob.GPUs = gpus
			for _, sc := range w.scorers {
				v, ok := p.Annotations[plugins.ExplainAnnotation(sc)]
				if !ok {
					continue
				}
				var x plugins.Explanation
				if err := json.Unmarshal([]byte(v), &x); err != nil {
					w.errs = append(w.errs, fmt.Errorf("pod %s: %s: %w", p.Name, plugins.ExplainAnnotation(sc), err))
					continue
				}
				if ob.Explain == nil {
					ob.Explain = map[string]*plugins.Explanation{}
				}
				ob.Explain[sc] = &x
			}
			w.running++
		}
		if p.Status.Phase == v1.PodSucceeded && ob.Finished.IsZero() && !ob.Bound.IsZero() {
			ob.Finished = now
			w.running--
			w.done++
			go func(name string) {
				var zero int64
				_ = w.cs.CoreV1().Pods(Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}(p.Name)
		}
		w.poke()
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		p, ok := obj.(*v1.Pod)
		var k int
		if !ok {
			return
		}
		if _, err := fmt.Sscanf(p.Name, "task-%06d", &k); err != nil || k < 0 || k >= len(w.pods) {
			return
		}
		w.mu.Lock()
		w.pods[k].Deleted = time.Now().Round(0)
		w.mu.Unlock()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, n any) { see(n) },
		DeleteFunc: gone,
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("pod informer did not sync")
	}
	return nil
}

// wait returns once every created pod has finished, or when, with none
// running, no pending pod has been bound for settle.
func (w *watcher) wait(settle time.Duration) error {
	for {
		w.mu.Lock()
		all := w.made == len(w.pods)
		idle := w.running == 0
		finished := w.done == len(w.pods)
		var err error
		if len(w.errs) > 0 {
			err = w.errs[0]
		}
		w.mu.Unlock()
		switch {
		case err != nil:
			return err
		case finished:
			return nil
		}
		select {
		case <-w.change:
		case <-time.After(settle):
			if all && idle {
				return nil
			}
		}
	}
}

func (w *watcher) snapshot() []Observed {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Observed(nil), w.pods...)
}

// fixed starts each queued task on its observed node and GPUs once they
// are free (at once, save for a finish and a bind observed out of order
// within the same millisecond); a task never bound stays queued. A task
// whose GPUs were not recorded (bound by a scheduler that writes no
// wattsched.io/gpu-index) gets the GPUs cluster.BestFitGPUs picks on its
// node when it starts, as gpushare.BuildNode counts such a pod.
type fixed struct {
	at map[job.ID]*cluster.Placement
}

func (f *fixed) Schedule(st *policy.State) []policy.Action {
	// take places t on its observed node and GPUs if they are free,
	// holding them for the tasks behind it in this call.
	take := func(t *job.Task) (policy.Start, bool) {
		p := f.at[t.ID]
		if p == nil {
			return policy.Start{}, false
		}
		n := st.Cluster.Nodes[p.Node]
		if ok, _ := cluster.Fits(&t.Demand, n); !ok {
			return policy.Start{}, false
		}
		gpus := p.GPUs
		if gpus == nil && t.GPUCount > 0 {
			if gpus = cluster.BestFitGPUs(&t.Demand, n); gpus == nil {
				return policy.Start{}, false
			}
		}
		for _, g := range gpus {
			if t.Shared() && n.GPUFree[g] < t.GPUMilli || !t.Shared() && n.GPUFree[g] != job.MilliPerGPU {
				return policy.Start{}, false
			}
		}
		// Hold the resources for the tasks behind it in this call.
		_ = st.Cluster.Allocate(t, p.Node, gpus)
		return policy.Start{Task: t.ID, Node: p.Node, GPUs: gpus}, true
	}
	release := func(t *job.Task) { _ = st.Cluster.Release(t) }
	var out []policy.Action
	var taken []*job.Task
	for _, t := range st.Queue {
		if t.Gang != "" {
			continue // started whole below
		}
		if s, ok := take(t); ok {
			out, taken = append(out, s), append(taken, t)
		}
	}
	out, taken = startGangs(st.Queue, take, release, out, taken)
	for _, t := range taken {
		release(t)
	}
	return out
}

// Account runs the observed replay through the simulator's replay
// accounting: each pod starts at its observed bind time (in simulated
// time) on its observed node and GPUs and runs for its duration under the
// same power model; its submit time stays its arrival. A pod bound
// without GPU indices (ob.GPUs nil) gets its node's best-fit GPUs when it
// starts.
func Account(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, pr *PolicyRun, factor float64) error {
	c, err := cluster.New(env.Catalog, in.Nodes)
	if err != nil {
		return err
	}
	byName := map[string]cluster.NodeID{}
	for _, n := range c.Nodes {
		byName[n.Name] = n.ID
	}
	pods := append([]job.Task(nil), in.Pods...)
	at := map[job.ID]*cluster.Placement{}
	for k := range pods {
		ob := pr.Pods[k]
		if ob.Bound.IsZero() {
			continue
		}
		id, ok := byName[ob.Node]
		if !ok {
			return fmt.Errorf("pod %s bound to unknown node %q", podName(k), ob.Node)
		}
		if ob.GPUs != nil && len(ob.GPUs) != pods[k].GPUCount {
			return fmt.Errorf("pod %s on %s: %d GPUs in its annotation, the task asks for %d", podName(k), ob.Node, len(ob.GPUs), pods[k].GPUCount)
		}
		at[pods[k].ID] = &cluster.Placement{Task: pods[k].ID, Node: id, GPUs: ob.GPUs}
		pods[k].Submit = max(pods[k].Submit, simMS(ob.Bound, pr.Start, factor))
	}
	e, err := sim.New(c, &fixed{at: at}, sim.Options{Mode: sim.Replay, Power: power.PWR{}, Seed: s.FirstSeed})
	if err != nil {
		return err
	}
	res, err := e.Run(pods)
	if err != nil {
		return err
	}
	submit := map[job.ID]job.Time{}
	for _, t := range in.Pods {
		submit[t.ID] = t.Submit
	}
	for i := range res.Tasks {
		res.Tasks[i].Submit = submit[res.Tasks[i].ID]
	}
	acct, err := s.Account()
	if err != nil {
		return err
	}
	usd, kg, err := acct.Cost(res.Hourly)
	if err != nil {
		return err
	}
	pr.Run = &tasks.ReplayRun{Policy: pr.Policy, Result: res, CostUSD: usd, CO2Kg: kg}
	return nil
}
