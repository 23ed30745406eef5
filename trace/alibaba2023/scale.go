package alibaba2023

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// MaxScaleFactor bounds RepeatNodes and RepeatPods.
const MaxScaleFactor = 10000

// RepeatNodes is the node list repeated factor times: the first copy keeps
// the names, copy k (1 <= k < factor) appends "-x<k>" to every name. It is
// how wattsched builds larger clusters from the openb node list (wattsched
// traces scale; the scaling benchmarks).
func RepeatNodes(nodes []cluster.NodeSpec, factor int) ([]cluster.NodeSpec, error) {
	if factor < 1 || factor > MaxScaleFactor {
		return nil, fmt.Errorf("factor %d, want 1..%d", factor, MaxScaleFactor)
	}
	out := make([]cluster.NodeSpec, 0, len(nodes)*factor)
	seen := make(map[string]bool, len(nodes)*factor)
	for k := range factor {
		for _, n := range nodes {
			n.Name = copyName(n.Name, k)
			if seen[n.Name] {
				return nil, fmt.Errorf("node %q appears twice in the repeated list (rename the nodes ending in -x<number>)", n.Name)
			}
			seen[n.Name] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// RepeatPods is the pod list repeated factor times, named as RepeatNodes
// names nodes, with IDs 0..n-1 in the new order and every copy at the
// original times (factor times the load).
func RepeatPods(pods []job.Task, factor int) ([]job.Task, error) {
	if factor < 1 || factor > MaxScaleFactor {
		return nil, fmt.Errorf("factor %d, want 1..%d", factor, MaxScaleFactor)
	}
	out := make([]job.Task, 0, len(pods)*factor)
	seen := make(map[string]bool, len(pods)*factor)
	for k := range factor {
		for _, p := range pods {
			p.Name = copyName(p.Name, k)
			if seen[p.Name] {
				return nil, fmt.Errorf("pod %q appears twice in the repeated list (rename the pods ending in -x<number>)", p.Name)
			}
			seen[p.Name] = true
			if p.Gang != "" {
				p.Gang = copyName(p.Gang, k)
			}
			p.ID = job.ID(len(out))
			out = append(out, p)
		}
	}
	return out, nil
}

func copyName(name string, k int) string {
	if k == 0 {
		return name
	}
	return name + "-x" + strconv.Itoa(k)
}

// WriteNodes writes a node list in the form ReadNodes reads.
func WriteNodes(w io.Writer, nodes []cluster.NodeSpec) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(nodeColumns, ",") + "\n")
	for _, n := range nodes {
		fmt.Fprintf(bw, "%s,%d,%d,%d,%s\n", csvField(n.Name), n.CPUMilli, n.MemMiB, n.GPUs, csvField(n.GPUModel))
	}
	return bw.Flush()
}

// WritePods writes a pod list in the 11-column form ReadPods reads
// (qos and pod_phase empty, scheduled_time the creation time), with
// reference_gpu and workload when a pod has either, and gang and
// gang_size when a pod is in a gang, and mig_profile when a pod asks for
// a MIG instance. Times must be whole
// seconds, as ReadPods gives them.
func WritePods(w io.Writer, pods []job.Task) error {
	cols := timedColumns
	for _, p := range pods {
		if p.RefGPU != "" || p.Kind == job.Inference {
			cols = max(cols, timedColumns+2)
		}
		if p.Gang != "" {
			cols = max(cols, timedColumns+4)
		}
		if p.MIG() {
			cols = len(podColumns)
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(podColumns[:cols], ",") + "\n")
	for _, p := range pods {
		if p.Submit%1000 != 0 || p.Work != math.Trunc(p.Work) || p.Work < 0 {
			return fmt.Errorf("pod %s: submit %d ms and work %g s are not whole seconds", p.Name, p.Submit, p.Work)
		}
		c := int64(p.Submit / 1000)
		fmt.Fprintf(bw, "%s,%d,%d,%d,%d,%s,,,%d,%d,%d", csvField(p.Name), p.CPUMilli, p.MemMiB, p.GPUCount, p.GPUMilli,
			csvField(strings.Join(p.GPUSpec, "|")), c, c+int64(p.Work), c)
		if cols > timedColumns {
			kind := ""
			if p.Kind == job.Inference {
				kind = string(job.Inference)
			}
			fmt.Fprintf(bw, ",%s,%s", csvField(p.RefGPU), kind)
		}
		if cols > timedColumns+2 {
			size := ""
			if p.Gang != "" {
				size = strconv.Itoa(p.GangSize)
			}
			fmt.Fprintf(bw, ",%s,%s", csvField(p.Gang), size)
		}
		if cols > timedColumns+4 {
			fmt.Fprintf(bw, ",%s", csvField(p.MIGProfile))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// csvField quotes s when CSV needs it.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
