package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// The slice of the openb cluster and of its default pod list the parity
// tests replay: every 25th GPU node (49 nodes of all seven GPU models) and
// the first 300 pods.
const (
	nodeStride = 25
	numPods    = 300
)

func openbSlice(t testing.TB) ([]cluster.NodeSpec, []job.Task, []job.Task) {
	t.Helper()
	all, err := alibaba2023.GPUNodes()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []cluster.NodeSpec
	for i := 0; i < len(all); i += nodeStride {
		nodes = append(nodes, all[i])
	}
	pods, err := alibaba2023.Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	return nodes, pods[:numPods], pods
}

// policyCase is one profile of k8s/deploy/scheduler-config.yaml with the
// core Placer that must agree with it; slice, when set, replaces
// openbSlice.
type policyCase struct {
	name, schedulerName string
	placer              func(workload []job.Task) (*policy.Placer, error)
	slice               func(testing.TB) ([]cluster.NodeSpec, []job.Task, []job.Task)
}

// mixedSlice is a cluster of H100, A100 (no inference speed: the energy
// scorer falls back to PWR's score there), L40S and CPU-only nodes, and
// the parity tests' openb pods measured on H100, every third one an
// inference pod: the pods the energy profile places by speed.
func mixedSlice(t testing.TB) ([]cluster.NodeSpec, []job.Task, []job.Task) {
	_, tasks, workload := openbSlice(t)
	var nodes []cluster.NodeSpec
	for i, m := range []struct {
		n, gpus int
		model   string
		cpu     int64
	}{{8, 8, "H100", 224000}, {8, 8, "A100", 224000}, {12, 4, "L40S", 128000}, {4, 0, "", 96000}} {
		for k := range m.n {
			nodes = append(nodes, cluster.NodeSpec{Name: fmt.Sprintf("m%d-%02d", i, k), CPUMilli: m.cpu, MemMiB: 1 << 20, GPUs: m.gpus, GPUModel: m.model})
		}
	}
	tasks = slices.Clone(tasks)
	for i := range tasks {
		tasks[i].RefGPU = "H100"
		if i%3 == 0 {
			tasks[i].Kind = job.Inference
		}
	}
	return nodes, tasks, workload
}

var cases = []policyCase{
	{"FGD", "wattsched-fgd", func(w []job.Task) (*policy.Placer, error) {
		f, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: w})
		if err != nil {
			return nil, err
		}
		return policy.NewPlacer(nil, []policy.Weighted{{Name: "fgd", Scorer: f, Weight: 1}})
	}, nil},
	{"PWR", "wattsched-pwr", func([]job.Task) (*policy.Placer, error) {
		p, err := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
		if err != nil {
			return nil, err
		}
		return policy.NewPlacer(nil, []policy.Weighted{{Name: "pwr", Scorer: p, Weight: 1}})
	}, nil},
	{"0.2*PWR+0.8*FGD", "wattsched-pwr-fgd", func(w []job.Task) (*policy.Placer, error) {
		p, err := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
		if err != nil {
			return nil, err
		}
		f, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: w})
		if err != nil {
			return nil, err
		}
		return policy.NewPlacer(nil, []policy.Weighted{{Name: "pwr", Scorer: p, Weight: 200}, {Name: "fgd", Scorer: f, Weight: 800}})
	}, nil},
	{"Energy", "wattsched-energy", func([]job.Task) (*policy.Placer, error) {
		e, err := energy.New(energy.Args{}, policy.Deps{Catalog: hw.Default(), Power: power.PWR{}})
		if err != nil {
			return nil, err
		}
		return policy.NewPlacer(nil, []policy.Weighted{{Name: "energy", Scorer: e, Weight: 1}})
	}, mixedSlice},
}

func TestParity(t *testing.T) {
	for _, pc := range cases {
		t.Run(pc.name, func(t *testing.T) { parity(t, pc, -1) })
	}
}

// TestRestartParity restarts the scheduler half-way through the FGD
// sequence: the new one knows nothing but what the API server holds, so
// the shared GPUs' state must come back from the pods' annotations.
func TestRestartParity(t *testing.T) {
	parity(t, cases[0], numPods/2)
}

// parity submits the pods one at a time to a real kube-scheduler and
// checks each outcome against the core Placer on the same state: a pod the
// core cannot place is unschedulable; otherwise it is bound to one of the
// nodes with the core's highest total score (the node itself when that is
// unique: kube-scheduler breaks ties at random where the core takes the
// lowest node index), with exactly the GPUs the core's selector picks on
// that node. The core then applies the same placement, so both stay in
// the same state.
func parity(t *testing.T, pc policyCase, restartAt int) {
	slice := pc.slice
	if slice == nil {
		slice = openbSlice
	}
	specs, tasks, workload := slice(t)
	cs, rc := apiServer(t)
	byName := map[string]cluster.NodeID{}
	for i, s := range specs {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		byName[s.Name] = cluster.NodeID(i)
	}
	stop := startScheduler(t, cs, rc, deployConfig())
	c, err := cluster.New(hw.Default(), specs)
	if err != nil {
		t.Fatal(err)
	}
	placer, err := pc.placer(workload)
	if err != nil {
		t.Fatal(err)
	}
	var bound, unsched, unique, gpuPods int
	for i := range tasks {
		if i == restartAt {
			stop()
			stop = startScheduler(t, cs, rc, deployConfig())
			t.Logf("scheduler restarted before pod %d", i)
		}
		task := &tasks[i]
		name := fmt.Sprintf("p%04d", i)
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(task, name, pc.schedulerName), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out, err := waitScheduled(cs, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		top, _, ok := placer.Top(task, c)
		if !ok {
			if out.Node != "" {
				t.Fatalf("pod %d (%s): bound to %s, but the core finds no feasible node", i, task.Name, out.Node)
			}
			unsched++
			deletePod(t, cs, name)
			continue
		}
		if out.Node == "" {
			t.Fatalf("pod %d (%s): unschedulable (%s), but the core places it on %s", i, task.Name, out.Message, c.Nodes[top[0]].Name)
		}
		id, known := byName[out.Node]
		if !known || !slices.Contains(top, id) {
			t.Fatalf("pod %d (%s): bound to %s, not among the core's best nodes %v", i, task.Name, out.Node, names(c, top))
		}
		if len(top) == 1 {
			unique++
		}
		gpus := placer.SelectGPUs(task, c.Nodes[id])
		if want := gpushare.FormatGPUIndex(gpus); task.GPUCount > 0 && out.GPUs != want {
			t.Fatalf("pod %d (%s) on %s: GPUs %q, the core picks %q", i, task.Name, out.Node, out.GPUs, want)
		}
		if task.GPUCount > 0 {
			gpuPods++
		}
		if err := c.Allocate(task, id, gpus); err != nil {
			t.Fatal(err)
		}
		bound++
	}
	t.Logf("%s: %d pods on %d nodes: %d bound (%d with GPUs, each on the core's GPUs), %d unschedulable in both; best node unique for %d, tied for %d (kube-scheduler picked one of the tied nodes)",
		pc.name, len(tasks), len(specs), bound, gpuPods, unsched, unique, bound-unique)
	if bound == 0 || unique == 0 {
		t.Fatalf("the sequence exercised nothing: %d bound, %d unique", bound, unique)
	}
}

func names(c *cluster.Cluster, ids []cluster.NodeID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, c.Nodes[id].Name)
	}
	return out
}

func deletePod(t testing.TB, cs clientset.Interface, name string) {
	t.Helper()
	var zero int64
	if err := cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}
