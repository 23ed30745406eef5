// Package k8sdump reads a Kubernetes cluster's nodes and pods from the JSON
// that `kubectl get nodes,pods -A -o json` prints (a List of Node and Pod
// objects), without importing Kubernetes' own packages: the core module
// stays free of k8s.io. It uses the same label and annotations as the
// wattsched kube-scheduler plugins: the GPU model from
// nvidia.com/gpu.product, whole GPUs from nvidia.com/gpu, a GPU share from
// wattsched.io/gpu-milli, accepted models from wattsched.io/gpu-models.
package k8sdump

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/internal/userfile"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/trace"
)

// Names shared with the kube-scheduler plugins (k8s/gpushare).
const (
	ResourceGPU     = "nvidia.com/gpu"
	LabelGPUProduct = "nvidia.com/gpu.product"
	AnnGPUMilli     = "wattsched.io/gpu-milli"
	AnnGPUModels    = "wattsched.io/gpu-models"
	AnnGPUIndex     = "wattsched.io/gpu-index"
)

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		CreationTimestamp string            `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string      `json:"nodeName"`
		Containers     []container `json:"containers"`
		InitContainers []container `json:"initContainers"`
	} `json:"spec"`
	Status struct {
		Allocatable       map[string]string `json:"allocatable"`
		Phase             string            `json:"phase"`
		StartTime         string            `json:"startTime"`
		ContainerStatuses []struct {
			State struct {
				Terminated *struct {
					FinishedAt string `json:"finishedAt"`
				} `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

type container struct {
	Resources struct {
		Requests map[string]string `json:"requests"`
	} `json:"resources"`
}

// Pod is one pod of the dump in the cluster model's units.
type Pod struct {
	Name      string // namespace/name
	Demand    job.Demand
	Created   time.Time
	Phase     string
	Node      string
	Placement string // the path of the item, for errors: items[i]
}

// Dump is a cluster: its nodes (as node specs) and pods.
type Dump struct {
	Nodes []cluster.NodeSpec
	Pods  []Pod
}

// Read parses the dump; errors name the file and the item's JSON path and
// field. Nodes are sorted by name, pods by creation time then name.
func Read(r io.Reader, file string) (*Dump, error) {
	var l struct {
		Kind  string   `json:"kind"`
		Items []object `json:"items"`
	}
	r, err := userfile.Reader(r, file, userfile.Document)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bad := func(i int, field string, err error) error {
		return fmt.Errorf("%s: items[%d].%s: %w", file, i, field, err)
	}
	d := &Dump{}
	seen := map[string]int{} // "Node name" or "Pod namespace/name" -> item
	// named checks an item's name (Kubernetes allows 253 bytes, so the
	// namespace and the name are each a trace.CheckName) and that no other
	// item of its kind has it.
	named := func(i int, kind string, o object) error {
		if err := trace.CheckName(o.Metadata.Name); err != nil {
			return bad(i, "metadata.name", err)
		}
		name := o.Metadata.Name
		if kind == "pod" {
			if err := trace.CheckName(o.Metadata.Namespace); err != nil && o.Metadata.Namespace != "" {
				return bad(i, "metadata.namespace", err)
			}
			name = o.Metadata.Namespace + "/" + name
		}
		if prev, dup := seen[kind+" "+name]; dup {
			return bad(i, "metadata.name", fmt.Errorf("%s %q is also items[%d]", kind, name, prev))
		}
		seen[kind+" "+name] = i
		return nil
	}
	for i, o := range l.Items {
		switch o.Kind {
		case "Node":
			a := o.Status.Allocatable
			cpu, err := quantity(a["cpu"], 1000)
			if err != nil {
				return nil, bad(i, "status.allocatable.cpu", err)
			}
			mem, err := quantity(a["memory"], 1)
			if err != nil {
				return nil, bad(i, "status.allocatable.memory", err)
			}
			gpus, err := quantity(a[ResourceGPU], 1)
			if err != nil || gpus > 64 {
				return nil, bad(i, "status.allocatable[\""+ResourceGPU+"\"]", fmt.Errorf("%q: want 0..64 GPUs", a[ResourceGPU]))
			}
			if err := named(i, "node", o); err != nil {
				return nil, err
			}
			s := cluster.NodeSpec{Name: o.Metadata.Name, CPUMilli: cpu, MemMiB: mem >> 20, GPUs: int(gpus)}
			if s.GPUs > 0 {
				if s.GPUModel = o.Metadata.Labels[LabelGPUProduct]; s.GPUModel == "" {
					return nil, bad(i, "metadata.labels[\""+LabelGPUProduct+"\"]", fmt.Errorf("missing on a node with %d GPUs", s.GPUs))
				}
			}
			if s.Name == "" || s.CPUMilli <= 0 {
				return nil, bad(i, "status.allocatable.cpu", fmt.Errorf("node %q: no CPU", s.Name))
			}
			d.Nodes = append(d.Nodes, s)
		case "Pod":
			p, err := pod(o)
			if err != nil {
				return nil, bad(i, err.field, err.err)
			}
			if err := named(i, "pod", o); err != nil {
				return nil, err
			}
			p.Placement = fmt.Sprintf("items[%d]", i)
			d.Pods = append(d.Pods, *p)
		}
	}
	if len(d.Nodes) == 0 {
		return nil, fmt.Errorf("%s: no Node items (kubectl get nodes,pods -A -o json)", file)
	}
	sort.SliceStable(d.Nodes, func(a, b int) bool { return d.Nodes[a].Name < d.Nodes[b].Name })
	sort.SliceStable(d.Pods, func(a, b int) bool {
		if !d.Pods[a].Created.Equal(d.Pods[b].Created) {
			return d.Pods[a].Created.Before(d.Pods[b].Created)
		}
		return d.Pods[a].Name < d.Pods[b].Name
	})
	return d, nil
}

type fieldErr struct {
	field string
	err   error
}

func pod(o object) (*Pod, *fieldErr) {
	p := &Pod{Name: o.Metadata.Namespace + "/" + o.Metadata.Name, Phase: o.Status.Phase, Node: o.Spec.NodeName}
	t, err := time.Parse(time.RFC3339, o.Metadata.CreationTimestamp)
	if err != nil {
		return nil, &fieldErr{"metadata.creationTimestamp", fmt.Errorf("%q is not RFC 3339", o.Metadata.CreationTimestamp)}
	}
	p.Created = t
	// Effective requests as the scheduler counts them: the containers' sum,
	// or the largest init container's when that is larger.
	sum := map[string]int64{}
	for _, res := range []struct {
		name string
		unit int64
	}{{"cpu", 1000}, {"memory", 1}, {ResourceGPU, 1}} {
		var s, initMax int64
		for k, c := range o.Spec.Containers {
			v, err := quantity(c.Resources.Requests[res.name], res.unit)
			if err != nil {
				return nil, &fieldErr{fmt.Sprintf("spec.containers[%d].resources.requests.%s", k, res.name), err}
			}
			s += v
		}
		for k, c := range o.Spec.InitContainers {
			v, err := quantity(c.Resources.Requests[res.name], res.unit)
			if err != nil {
				return nil, &fieldErr{fmt.Sprintf("spec.initContainers[%d].resources.requests.%s", k, res.name), err}
			}
			initMax = max(initMax, v)
		}
		sum[res.name] = max(s, initMax)
	}
	p.Demand = job.Demand{CPUMilli: sum["cpu"], MemMiB: (sum["memory"] + (1 << 20) - 1) >> 20}
	if g := sum[ResourceGPU]; g > 0 {
		p.Demand.GPUCount, p.Demand.GPUMilli = int(g), job.MilliPerGPU
	}
	if v, ok := o.Metadata.Annotations[AnnGPUMilli]; ok {
		var m int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &m); err != nil || m < 1 || m >= job.MilliPerGPU || p.Demand.GPUCount > 0 {
			return nil, &fieldErr{"metadata.annotations[\"" + AnnGPUMilli + "\"]", fmt.Errorf("%q: want 1..999 thousandths of one GPU, without %s", v, ResourceGPU)}
		}
		p.Demand.GPUCount, p.Demand.GPUMilli = 1, m
	}
	if v, ok := o.Metadata.Annotations[AnnGPUModels]; ok && p.Demand.GPUCount > 0 {
		for _, m := range strings.Split(v, "|") {
			if m = strings.TrimSpace(m); m != "" {
				p.Demand.GPUSpec = append(p.Demand.GPUSpec, m)
			}
		}
	}
	if err := p.Demand.Validate(); err != nil {
		return nil, &fieldErr{"spec", err}
	}
	return p, nil
}

// quantity parses a Kubernetes quantity ("32", "500m", "128Gi", "1e3")
// times unit (1000 for CPU milli); empty is 0. Values that do not fit the
// model's int64 units (above 2^50) are errors, never wrapped.
func quantity(s string, unit int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	mult := big.NewRat(1, 1)
	for _, suf := range []struct {
		s string
		n *big.Rat
	}{{"Ki", pow(2, 10)}, {"Mi", pow(2, 20)}, {"Gi", pow(2, 30)}, {"Ti", pow(2, 40)}, {"Pi", pow(2, 50)}, {"Ei", pow(2, 60)},
		{"m", big.NewRat(1, 1000)}, {"k", pow(10, 3)}, {"M", pow(10, 6)}, {"G", pow(10, 9)}, {"T", pow(10, 12)}, {"P", pow(10, 15)}, {"E", pow(10, 18)}} {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.n
			break
		}
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok || v.Sign() < 0 {
		return 0, fmt.Errorf("%q is not a non-negative quantity", s)
	}
	v.Mul(v, mult).Mul(v, big.NewRat(unit, 1))
	f, _ := v.Float64()
	if f > math.Exp2(50) {
		return 0, fmt.Errorf("quantity %s is too large", v.FloatString(0))
	}
	// Round up, as the scheduler does for milli-CPU.
	n := new(big.Int).Quo(v.Num(), v.Denom())
	if new(big.Rat).SetInt(n).Cmp(v) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64(), nil
}

func pow(b, e int64) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil))
}

// Files renders the dump as an openb node list (nodes.csv), pod list
// (pods.csv: creation times in seconds from the earliest pod; a pod that
// has not ended is given the dump's latest creation time as its end, so
// replays run it to the snapshot) and a scenario comparing FGD, PWR, their
// 0.1/0.9 combination and BestFit by inflation on them (scenario.yaml).
func (d *Dump) Files(source string) map[string][]byte {
	var nb strings.Builder
	nb.WriteString("sn,cpu_milli,memory_mib,gpu,model\n")
	for _, n := range d.Nodes {
		fmt.Fprintf(&nb, "%s,%d,%d,%d,%s\n", csvField(n.Name), n.CPUMilli, n.MemMiB, n.GPUs, csvField(n.GPUModel))
	}
	var pb strings.Builder
	pb.WriteString("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n")
	var t0, last time.Time
	for i, p := range d.Pods {
		if i == 0 || p.Created.Before(t0) {
			t0 = p.Created
		}
		if p.Created.After(last) {
			last = p.Created
		}
	}
	for _, p := range d.Pods {
		c := int64(p.Created.Sub(t0).Seconds())
		e := int64(last.Sub(t0).Seconds())
		fmt.Fprintf(&pb, "%s,%d,%d,%d,%d,%s,,%s,%d,%d,\n", csvField(p.Name), p.Demand.CPUMilli, p.Demand.MemMiB, p.Demand.GPUCount, p.Demand.GPUMilli,
			csvField(strings.Join(p.Demand.GPUSpec, "|")), csvField(p.Phase), c, max(c, e))
	}
	ref := "H100" // the example reference: the first GPU model of the cluster
	for _, n := range d.Nodes {
		if n.GPUs > 0 && n.GPUModel != "" {
			ref = n.GPUModel
			break
		}
	}
	sc := fmt.Sprintf(`# Imported by wattsched import k8s from %s: %d nodes, %d pods.
# nodes.csv and pods.csv are in the openb format (docs/formats.md). GPU models are
# the nodes' nvidia.com/gpu.product labels; a model the catalog lacks goes in the
# hardware section (docs/scenarios.md). Mode replay runs the pods from their
# creation times to the snapshot; inflation asks how each policy packs more of them.
name: imported-k8s
description: policies compared on the workload and nodes of a Kubernetes cluster (%s)
mode: inflation
seeds: 3
target: 1.0
trace: {nodes: nodes.csv, pods: pods.csv}
# Job speed (mode replay): which GPU model the pods' durations were measured on
# is not in a snapshot, so they run as traced on every GPU. If you know it, name
# it, and give the cluster's GPU models without a speed figure one in a hardware
# section (docs/scenarios.md#job-speed):
#   trace: {nodes: nodes.csv, pods: pods.csv, reference_gpu: %s}
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
  - {name: "0.1*PWR+0.9*FGD", scorers: [{policy: pwr, weight: 100}, {policy: fgd, weight: 900}]}
  - {name: BestFit, scorers: [{policy: bestfit, weight: 1000}]}
`, source, len(d.Nodes), len(d.Pods), source, ref)
	return map[string][]byte{"nodes.csv": []byte(nb.String()), "pods.csv": []byte(pb.String()), "scenario.yaml": []byte(sc)}
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
