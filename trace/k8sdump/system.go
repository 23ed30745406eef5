package k8sdump

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// GPU-share resources of Alibaba's gpushare device plugin and scheduler
// extender: a node advertises the GiB of memory of all its GPUs and their
// count, a pod asks for GiB of one GPU's memory.
const (
	ResourceAliyunGPUMem   = "aliyun.com/gpu-mem"
	ResourceAliyunGPUCount = "aliyun.com/gpu-count"
)

// Names that make a pod a system pod.
const (
	// AnnMirror marks the API server's mirror of a static pod.
	AnnMirror = "kubernetes.io/config.mirror"
	// SystemNamespace holds the cluster's own pods.
	SystemNamespace = "kube-system"
)

// Times a dump may hold: after the Unix epoch (a zero Unix time is an
// unset one) and before 2100.
var (
	TimeMin = time.Unix(0, 0).UTC()
	TimeMax = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// timeWindow names the window in messages.
const timeWindow = "after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z (docs/formats.md)"

// InWindow reports whether t is a time a dump or a time series may hold.
func InWindow(t time.Time) bool { return t.After(TimeMin) && t.Before(TimeMax) }

// parseTime reads an RFC 3339 time of field and checks it is in the
// window.
func parseTime(field, v string) (time.Time, *fieldErr) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, &fieldErr{field, fmt.Errorf("%q is not RFC 3339", v)}
	}
	if !InWindow(t) {
		return t, &fieldErr{field, fmt.Errorf("%q is not %s", v, timeWindow)}
	}
	return t, nil
}

// Taint is a node's taint (spec.taints).
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

// String is the taint as kubectl writes it: key=value:Effect.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// Toleration is a pod's toleration (spec.tolerations).
type Toleration struct {
	Key      string `json:"key"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Effect   string `json:"effect"`
}

// Tolerates reports whether the toleration matches the taint, by
// Kubernetes' rule: the same effect (or none given), and the same key and
// value (operator Equal, the default) or the same key (Exists; an empty
// key with Exists matches every taint).
func (tl Toleration) Tolerates(t Taint) bool {
	if tl.Effect != "" && tl.Effect != t.Effect {
		return false
	}
	switch tl.Operator {
	case "Exists":
		return tl.Key == "" || tl.Key == t.Key
	case "", "Equal":
		return tl.Key == t.Key && tl.Value == t.Value
	}
	return false
}

// tolerates reports whether tols tolerate every taint.
func tolerates(tols []Toleration, taints []Taint) bool {
	for _, t := range taints {
		if !slices.ContainsFunc(tols, func(tl Toleration) bool { return tl.Tolerates(t) }) {
			return false
		}
	}
	return true
}

// NodeTaints is a node's NoSchedule and NoExecute taints and the kept
// pods that do not tolerate them.
type NodeTaints struct {
	Node   string
	Taints []Taint
	// Intolerant are the kept pods (namespace/name, in pod order) that do
	// not tolerate every one of Taints: Kubernetes would not place them on
	// the node; a replay does not know taints.
	Intolerant []string
}

// SystemPod is a pod kept out of the jobs: the cluster's own.
type SystemPod struct {
	Item, Pod, Node, Phase string
	// Why says what makes it one: "DaemonSet x", "mirror pod",
	// "static pod (owner Node n)", "namespace kube-system".
	Why    string
	Demand job.Demand
	// Reserved is whether its requests were taken off its node's
	// allocatable (it is bound to a node of the dump and has not ended).
	Reserved bool
}

// Reserved is what a node's system pods request: their CPU and memory are
// taken off the node's allocatable in the node list; GPUs are not (a
// warning says so).
type Reserved struct {
	Node string
	Pods int
	// CPUMilli and MemMiB are the system pods' requests taken off.
	CPUMilli, MemMiB int64
	// GPUMilli is the GPU the system pods request (thousandths of a GPU),
	// not reserved.
	GPUMilli int64
	// AllocCPUMilli and AllocMemMiB are the node's allocatable before.
	AllocCPUMilli, AllocMemMiB int64
}

type ownerRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

// ownerRefs reads metadata.ownerReferences; a malformed one is a field
// error (the pod cannot be told a system pod or not).
func ownerRefs(o object) ([]ownerRef, *fieldErr) {
	raw := strings.TrimSpace(string(o.Metadata.OwnerReferences))
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var refs []ownerRef
	if err := json.Unmarshal([]byte(raw), &refs); err != nil {
		return nil, &fieldErr{"metadata.ownerReferences", fmt.Errorf("not a list of owner references ({apiVersion, kind, name, uid}): whether it is a system pod is unknown")}
	}
	for k, r := range refs {
		switch {
		case r.Kind == "":
			return nil, &fieldErr{fmt.Sprintf("metadata.ownerReferences[%d].kind", k), fmt.Errorf("missing: whether it is a system pod is unknown")}
		case r.Name == "":
			return nil, &fieldErr{fmt.Sprintf("metadata.ownerReferences[%d].name", k), fmt.Errorf("missing: whether it is a system pod is unknown")}
		}
	}
	return refs, nil
}

// systemWhy says why the pod is a system pod ("" when it is a job):
// owned by a DaemonSet, a mirror or static pod (annotation
// kubernetes.io/config.mirror, or owned by a Node), or in kube-system or
// one of the namespaces named.
func systemWhy(o object, namespaces []string) (string, *fieldErr) {
	refs, ferr := ownerRefs(o)
	if ferr != nil {
		return "", ferr
	}
	for _, r := range refs {
		if r.Kind == "DaemonSet" {
			return "DaemonSet " + Shown(r.Name), nil
		}
	}
	if _, ok := o.Metadata.Annotations[AnnMirror]; ok {
		return "mirror pod (" + AnnMirror + ")", nil
	}
	for _, r := range refs {
		if r.Kind == "Node" {
			return "static pod (owner Node " + Shown(r.Name) + ")", nil
		}
	}
	if ns := o.Metadata.Namespace; ns == SystemNamespace || slices.Contains(namespaces, ns) {
		return "namespace " + Shown(ns), nil
	}
	return "", nil
}

// reserve takes the requests of the system pods bound to a node of the
// dump, and not ended, off that node's allocatable (d.Nodes, sorted).
func (d *Dump) reserve() {
	idx := make(map[string]int, len(d.Nodes))
	for i, n := range d.Nodes {
		idx[n.Name] = i
	}
	rows := map[string]*Reserved{}
	for k := range d.System {
		s := &d.System[k]
		if s.Phase == "Succeeded" || s.Phase == "Failed" || s.Node == "" {
			continue // ended, or not bound: holds nothing
		}
		i, ok := idx[s.Node]
		if !ok {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s pod %s (system: %s): bound to node %s, which the dump lacks: nothing reserved", s.Item, s.Pod, s.Why, Shown(s.Node)))
			continue
		}
		s.Reserved = true
		r := rows[s.Node]
		if r == nil {
			r = &Reserved{Node: s.Node, AllocCPUMilli: d.Nodes[i].CPUMilli, AllocMemMiB: d.Nodes[i].MemMiB}
			rows[s.Node] = r
		}
		r.Pods++
		r.CPUMilli += s.Demand.CPUMilli
		r.MemMiB += s.Demand.MemMiB
		if g := s.Demand.TotalGPUMilli(); g > 0 {
			r.GPUMilli += g
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s pod %s (system: %s) requests %s on node %s: not reserved (the node list has no GPU apart from the jobs): replayed pods may use it", s.Item, s.Pod, s.Why, gpuAmount(s.Demand), Shown(s.Node)))
		}
	}
	for i := range d.Nodes {
		n := &d.Nodes[i]
		r := rows[n.Name]
		if r == nil {
			continue
		}
		n.CPUMilli -= r.CPUMilli
		n.MemMiB -= r.MemMiB
		if n.CPUMilli < 1 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("node %s: its system pods request %d milli-CPU of its %d: 1 milli-CPU left to the jobs", n.Name, r.CPUMilli, r.AllocCPUMilli))
			n.CPUMilli = 1
		}
		if n.MemMiB < 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("node %s: its system pods request %d MiB of its %d: no memory left to the jobs", n.Name, r.MemMiB, r.AllocMemMiB))
			n.MemMiB = 0
		}
		d.Reserved = append(d.Reserved, *r)
	}
}

// gpuAmount writes a GPU demand: "2 GPUs", "0.250 of a GPU".
func gpuAmount(dm job.Demand) string {
	if dm.Shared() {
		return fmt.Sprintf("%d thousandths of a GPU", dm.GPUMilli)
	}
	return fmt.Sprintf("%d GPUs", dm.GPUCount)
}

// taints sets d.Taints from the Node items: each node's NoSchedule and
// NoExecute taints (PreferNoSchedule is a preference) and the kept pods
// that do not tolerate them. Nodes of one set of taints share the list.
func (d *Dump) taints(items []object) {
	d.Taints = nil
	bySet := map[string][]string{}
	for _, o := range items {
		if o.Kind != "Node" {
			continue
		}
		var ts []Taint
		for _, t := range o.Spec.Taints {
			if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			continue
		}
		key := fmt.Sprint(ts)
		pods, done := bySet[key]
		if !done {
			pods = []string{}
			for _, p := range d.Pods {
				if !tolerates(p.Tolerations, ts) {
					pods = append(pods, p.Name)
				}
			}
			bySet[key] = pods
		}
		d.Taints = append(d.Taints, NodeTaints{Node: o.Metadata.Name, Taints: ts, Intolerant: pods})
	}
	sort.SliceStable(d.Taints, func(a, b int) bool { return d.Taints[a].Node < d.Taints[b].Node })
}

// nodeCtx is what reading a pod needs of the nodes: which are of the
// single MIG strategy (their profile) and which share GPUs by memory
// (GiB per GPU).
type nodeCtx struct {
	single map[string]MIGProfile
	gpuMem map[string]int64
	// migGeo is the MIG geometry (hw/mig.yaml) of each MIG node whose
	// GPU product has one: a pod bound there asks for one of its profiles.
	migGeo map[string]*hw.MIGGeometry
}

// add reads a node's gpushare resources: aliyun.com/gpu-count GPUs when
// nvidia.com/gpu counts none, and the GiB of one GPU's memory.
func (nc *nodeCtx) add(s *cluster.NodeSpec, o object, warns *[]string) *fieldErr {
	a := o.Status.Allocatable
	countField := "status.allocatable[\"" + ResourceAliyunGPUCount + "\"]"
	count, err := whole(a[ResourceAliyunGPUCount])
	if err != nil || count > maxNodeGPUs {
		return &fieldErr{countField, fmt.Errorf("%q: want 0..%d GPUs", a[ResourceAliyunGPUCount], maxNodeGPUs)}
	}
	memField := "status.allocatable[\"" + ResourceAliyunGPUMem + "\"]"
	mem, err := whole(a[ResourceAliyunGPUMem])
	if err != nil {
		return &fieldErr{memField, err}
	}
	if s.GPUs == 0 && count > 0 {
		product := o.Metadata.Labels[LabelGPUProduct]
		if product == "" {
			return &fieldErr{"metadata.labels[\"" + LabelGPUProduct + "\"]", fmt.Errorf("missing on a node with %d GPUs (%s)", count, ResourceAliyunGPUCount)}
		}
		s.GPUs, s.GPUModel = int(count), product
	}
	if mem == 0 {
		return nil
	}
	n := int64(s.GPUs)
	if count > 0 {
		n = count
	}
	if n == 0 {
		return &fieldErr{memField, fmt.Errorf("%d GiB of GPU memory on a node without GPUs", mem)}
	}
	if mem%n != 0 {
		*warns = append(*warns, fmt.Sprintf("%s %d GiB over %d GPUs is not a whole number per GPU: %d GiB each", ResourceAliyunGPUMem, mem, n, mem/n))
	}
	if mem/n == 0 {
		return &fieldErr{memField, fmt.Errorf("%d GiB over %d GPUs: less than 1 GiB each", mem, n)}
	}
	nc.gpuMem[s.Name] = mem / n
	return nil
}

// memShare is the share of one GPU that gib GiB of aliyun.com/gpu-mem are
// on node (or, for a pod not bound, on every gpushare node when they all
// have GPUs of one memory size): thousandths rounded down, at least 1.
func (nc *nodeCtx) memShare(node string, gib int64) (int, int64, error) {
	per, ok := nc.gpuMem[node]
	if node != "" && !ok {
		return 0, 0, fmt.Errorf("%d GiB on node %s, which advertises no %s: the share of a GPU it is is unknown", gib, Shown(node), ResourceAliyunGPUMem)
	}
	if node == "" {
		var sizes []int64
		for _, v := range nc.gpuMem {
			if !slices.Contains(sizes, v) {
				sizes = append(sizes, v)
			}
		}
		slices.Sort(sizes)
		if len(sizes) != 1 {
			return 0, 0, fmt.Errorf("%d GiB, not bound to a node, and the nodes advertising %s have GPUs of %v GiB: the share of a GPU it is is unknown", gib, ResourceAliyunGPUMem, sizes)
		}
		per = sizes[0]
	}
	if gib > per {
		return 0, 0, fmt.Errorf("%d GiB: more than one GPU's %d GiB (gpushare places a pod on one GPU)", gib, per)
	}
	return 1, max(1, gib*job.MilliPerGPU/per), nil
}

// gpuLike reports whether a resource name looks like a GPU or a part of
// one.
func gpuLike(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "gpu") || strings.Contains(l, "mig")
}

// whole parses a count of devices: a quantity that must be a whole
// number, as Kubernetes requires of extended resources ("500m" of a GPU
// is refused, never rounded to one GPU).
func whole(s string) (int64, error) {
	n, err := quantity(s, 1000)
	if err != nil {
		return 0, err
	}
	if n%1000 != 0 {
		return 0, fmt.Errorf("%q is not a whole number: devices are counted whole (a share of a GPU is %s)", strings.TrimSpace(s), AnnGPUMilli)
	}
	return n / 1000, nil
}

// Shown is s as a message shows it: quoted with escapes when it holds a
// control character or is not UTF-8, so that a name cannot break a line.
func Shown(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// EscapeLine writes the control characters of s as Go escapes ("\n",
// "\x00") and its invalid UTF-8 bytes as "\xff", so that a message that
// quotes what a dump holds stays on one line; other text is kept.
func EscapeLine(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lineErr is an error whose message is kept on one line (EscapeLine).
type lineErr struct{ err error }

func (e lineErr) Error() string { return EscapeLine(e.err.Error()) }
func (e lineErr) Unwrap() error { return e.err }

// yamlString is s as a YAML double-quoted scalar (JSON's escapes, which
// YAML reads), safe in a value or a comment whatever s holds.
func yamlString(s string) string {
	b, err := json.Marshal(s)
	if err != nil { // a string always marshals
		panic(err)
	}
	return string(b)
}
