// Package alibaba2023 reads the node and pod lists of Alibaba's
// cluster-trace-gpu-v2023 ("openb"), the traces of the FGD and PWR papers,
// and embeds them so that experiments run without external files.
package alibaba2023

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

//go:embed data/*.csv.gz
var data embed.FS

// Source is the attribution printed with results that use the embedded trace.
const Source = "Alibaba cluster-trace-gpu-v2023 (openb), Weng et al. USENIX ATC'23; research/study use"

var nodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// podQoS and podPhases are the values of the qos and pod_phase columns:
// openb's (LS, BE, Burstable, Guaranteed; Pending, Running, Succeeded,
// Failed) and Kubernetes' (BestEffort; Unknown), or empty.
var (
	podQoS    = []string{"", "LS", "BE", "Burstable", "Guaranteed", "BestEffort"}
	podPhases = []string{"", "Pending", "Running", "Succeeded", "Failed", "Unknown"}
)

var podColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time",
	"reference_gpu", "workload", "gang", "gang_size", "mig_profile"}

// timedColumns is the column count of the timed (11-column) openb form;
// reference_gpu and workload may follow it.
const timedColumns = 11

// ParseError locates a bad line or field: file, line, column.
type ParseError = trace.ParseError

func readHeader(r *csv.Reader, file string, want []string, minCols int) ([]string, error) {
	h, err := r.Read()
	if err == io.EOF {
		return nil, &ParseError{File: file, Line: 1, Err: errors.New("empty file, want a header")}
	}
	if err != nil {
		return nil, &ParseError{File: file, Line: 1, Err: err}
	}
	if len(h) < minCols || len(h) > len(want) {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("header has %d columns, want %d..%d: %v", len(h), minCols, len(want), want)}
	}
	for i, c := range h {
		if strings.TrimSpace(c) != want[i] {
			return nil, &ParseError{File: file, Line: 1, Column: strconv.Itoa(i + 1), Err: fmt.Errorf("header %q, want %q", c, want[i])}
		}
	}
	// The reader reuses its record slice: keep our own copy of the header.
	return append([]string(nil), want[:len(h)]...), nil
}

// newReader reads r (named file) within the bounds of a table
// (userfile.Table), gzip-compressed or not.
func newReader(r io.Reader, file string) (*csv.Reader, error) {
	br, err := userfile.Reader(r, file, userfile.Table)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return cr, nil
}

// row is one data line being parsed; the first error sticks.
type row struct {
	rec    []string
	file   string
	line   int
	header []string
	err    error
}

func (r *row) fail(col string, err error) {
	if r.err == nil {
		r.err = &ParseError{File: r.file, Line: r.line, Column: col, Err: err}
	}
}

// int parses column i as an integer in [min, max].
func (r *row) int(i int, min, max int64) int64 {
	if r.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(r.rec[i]), 10, 64)
	switch {
	case err != nil:
		r.fail(r.header[i], fmt.Errorf("%q is not an integer", r.rec[i]))
	case v < min || v > max:
		r.fail(r.header[i], fmt.Errorf("%d out of range %d..%d", v, min, max))
	}
	return v
}

// records calls fn for each data line after the header h.
func records(cr *csv.Reader, file string, h []string, fn func(r *row)) error {
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &ParseError{File: file, Line: line, Err: err}
		}
		if len(rec) != len(h) {
			return &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, want %d", len(rec), len(h))}
		}
		r := &row{rec: rec, file: file, line: line, header: h}
		if fn(r); r.err != nil {
			return r.err
		}
	}
}

// ReadNodes parses a node list (sn,cpu_milli,memory_mib,gpu,model). file names
// the input in errors.
func ReadNodes(r io.Reader, file string) ([]cluster.NodeSpec, error) {
	cr, err := newReader(r, file)
	if err != nil {
		return nil, err
	}
	h, err := readHeader(cr, file, nodeColumns, len(nodeColumns))
	if err != nil {
		return nil, err
	}
	var out []cluster.NodeSpec
	seen := map[string]int{}
	err = records(cr, file, h, func(r *row) {
		s := cluster.NodeSpec{Name: strings.TrimSpace(r.rec[0]), GPUModel: strings.TrimSpace(r.rec[4])}
		if err := trace.CheckName(s.Name); err != nil {
			r.fail("sn", err)
		} else if prev, dup := seen[s.Name]; dup {
			r.fail("sn", fmt.Errorf("node %q already on line %d", s.Name, prev))
		}
		seen[s.Name] = r.line
		s.CPUMilli = r.int(1, 1, 1<<40)
		s.MemMiB = r.int(2, 0, 1<<40)
		s.GPUs = int(r.int(3, 0, 64))
		if r.err == nil && s.GPUs > 0 && s.GPUModel == "" {
			r.fail("model", fmt.Errorf("%d GPUs without a model", s.GPUs))
		}
		if s.GPUs == 0 {
			s.GPUModel = ""
		}
		out = append(out, s)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPods parses a pod list, either the 11-column form (optionally
// followed by reference_gpu, the GPU model the pod's duration was measured
// on, workload, training or inference, gang and gang_size, the gang
// job the pod belongs to and its number of pods, both empty for a pod
// that is a job of its own, and mig_profile, the MIG instance profile the
// pod asks for, empty without MIG) or the 5-column form of the multigpu
// variants. A pod asks for at most 8 GPUs (one node's); a larger job is
// a gang of pods. Tasks get IDs 0..n-1 in file order; Submit and
// Work come from creation_time and deletion_time when present.
func ReadPods(r io.Reader, file string) ([]job.Task, error) {
	cr, err := newReader(r, file)
	if err != nil {
		return nil, err
	}
	h, err := readHeader(cr, file, podColumns, 5)
	if err != nil {
		return nil, err
	}
	if len(h) != 5 && len(h) < timedColumns {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("header has %d columns, want 5, %d or %d..%d (docs/formats.md)", len(h), timedColumns, timedColumns+1, len(podColumns))}
	}
	var out []job.Task
	seen := map[string]int{}
	err = records(cr, file, h, func(r *row) {
		t := job.Task{ID: job.ID(len(out)), Name: strings.TrimSpace(r.rec[0]), Kind: job.Training, Class: -1}
		if err := trace.CheckName(t.Name); err != nil {
			r.fail("name", err)
		} else if prev, dup := seen[t.Name]; dup {
			r.fail("name", fmt.Errorf("pod %q already on line %d", t.Name, prev))
		}
		seen[t.Name] = r.line
		t.CPUMilli = r.int(1, 0, 1<<40)
		t.MemMiB = r.int(2, 0, 1<<40)
		t.GPUCount = int(r.int(3, 0, 1<<20))
		if r.err == nil && t.GPUCount > maxPodGPUs {
			r.fail("num_gpu", fmt.Errorf("pod %q asks for %d GPUs, more than any node has (%d at most): a job across nodes is a gang of pods (columns gang, gang_size)", t.Name, t.GPUCount, maxPodGPUs))
		}
		t.GPUMilli = r.int(4, 0, job.MilliPerGPU)
		if len(h) > 5 {
			for _, s := range strings.Split(r.rec[5], "|") {
				if s = strings.TrimSpace(s); s != "" {
					t.GPUSpec = append(t.GPUSpec, s)
				}
			}
			c, d := r.int(8, 0, 1<<40), r.int(9, 0, 1<<40)
			if r.err == nil && d < c {
				r.fail("deletion_time", fmt.Errorf("%d before creation_time %d", d, c))
			}
			t.Submit = job.Time(c * 1000)
			t.Work = float64(d - c)
			// Read, not used, but checked (issue 40: anything was
			// accepted silently).
			if q := strings.TrimSpace(r.rec[6]); !slices.Contains(podQoS, q) {
				r.fail("qos", fmt.Errorf("%q, want one of %s or empty", q, strings.Join(podQoS[1:], ", ")))
			}
			if ph := strings.TrimSpace(r.rec[7]); !slices.Contains(podPhases, ph) {
				r.fail("pod_phase", fmt.Errorf("%q, want one of %s or empty", ph, strings.Join(podPhases[1:], ", ")))
			}
			// A pod is not scheduled before it exists. (No upper
			// bound: import k8s writes deletion_time as creation_time
			// plus the time the pod ran, so a pod that waited longer
			// than it ran is scheduled after it.)
			if strings.TrimSpace(r.rec[10]) != "" {
				if sc := r.int(10, 0, 1<<40); r.err == nil && sc < c {
					r.fail("scheduled_time", fmt.Errorf("%d before creation_time %d", sc, c))
				}
			}
		}
		if len(h) > timedColumns {
			t.RefGPU = strings.TrimSpace(r.rec[11])
		}
		if len(h) > timedColumns+1 {
			switch w := strings.TrimSpace(r.rec[12]); w {
			case "", string(job.Training):
			case string(job.Inference):
				t.Kind = job.Inference
			default:
				r.fail("workload", fmt.Errorf("%q, want training, inference or empty (training)", w))
			}
		}
		if len(h) > timedColumns+2 {
			t.Gang = strings.TrimSpace(r.rec[13])
			if t.Gang != "" {
				if err := trace.CheckName(t.Gang); err != nil {
					r.fail("gang", err)
				}
			}
		}
		if len(h) > timedColumns+3 {
			switch g := strings.TrimSpace(r.rec[14]); {
			case t.Gang == "" && g != "":
				r.fail("gang_size", fmt.Errorf("%q for a pod without a gang, want empty", g))
			case t.Gang != "":
				t.GangSize = int(r.int(14, 1, 1<<20))
			}
		} else if t.Gang != "" {
			r.fail("gang", errors.New("a gang needs the gang_size column"))
		}
		if len(h) > timedColumns+4 {
			r.migProfile(&t)
		}
		if r.err == nil {
			if err := t.Demand.Validate(); err != nil {
				r.fail("", err)
			}
		}
		out = append(out, t)
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ParseError{File: file, Line: 2, Err: errors.New("no pods")}
	}
	if err := checkGangSizes(out, file); err != nil {
		return nil, err
	}
	return out, nil
}

// migProfile reads the mig_profile column (16th) into t: empty for a pod
// without MIG; else the pod asks for one MIG instance of that profile, so
// num_gpu must be 1 and gpu_milli 0 or the instance's share (its compute
// slices x 1000 / the GPU's), which the reader fills in. A profile that
// none of the pod's accepted GPU models (gpu_spec; empty: any) has is an
// error naming the file, line, column and pod.
func (r *row) migProfile(t *job.Task) {
	prof := strings.TrimSpace(r.rec[15])
	if prof == "" || r.err != nil {
		return
	}
	_, milli, err := hw.MIGProfileFor(hw.Default(), t.GPUSpec, prof)
	switch {
	case err != nil:
		r.fail("mig_profile", fmt.Errorf("pod %q: %w", t.Name, err))
	case t.GPUCount != 1:
		r.fail("num_gpu", fmt.Errorf("pod %q: %d GPUs with mig_profile %s: a pod asks for one MIG instance (num_gpu 1)", t.Name, t.GPUCount, prof))
	case t.GPUMilli != 0 && t.GPUMilli != milli:
		r.fail("gpu_milli", fmt.Errorf("pod %q: %d with mig_profile %s, whose share is %d: want 0 or %d", t.Name, t.GPUMilli, prof, milli, milli))
	default:
		t.MIGProfile, t.GPUMilli = prof, milli
	}
}

// maxPodGPUs is the most GPUs one pod may ask for: one node's (the
// engine's per-node GPU rule, job.Demand.Validate).
const maxPodGPUs = 8

// checkGangSizes checks that the pods of each gang agree on its size and
// that the gang has that many pods, naming the file, gang and pods.
func checkGangSizes(pods []job.Task, file string) error {
	type gang struct {
		first string
		size  int
		n     int
	}
	gangs := map[string]*gang{}
	var names []string
	for i := range pods {
		t := &pods[i]
		if t.Gang == "" {
			continue
		}
		g := gangs[t.Gang]
		if g == nil {
			g = &gang{first: t.Name, size: t.GangSize}
			gangs[t.Gang] = g
			names = append(names, t.Gang)
		}
		if t.GangSize != g.size {
			return fmt.Errorf("%s: gang %s: pod %s says gang_size %d, pod %s says %d", file, t.Gang, g.first, g.size, t.Name, t.GangSize)
		}
		g.n++
	}
	sort.Strings(names)
	for _, name := range names {
		if g := gangs[name]; g.n != g.size {
			return fmt.Errorf("%s: gang %s: gang_size %d but %d pods", file, name, g.size, g.n)
		}
	}
	return nil
}

func embedded(file string) ([]byte, error) {
	b, err := data.ReadFile("data/" + file + ".gz")
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Traces lists the embedded pod lists by short name ("default", "gpushare40", ...).
func Traces() []string {
	ents, _ := fs.ReadDir(data, "data")
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "openb_pod_list_") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "openb_pod_list_"), ".csv.gz"))
		}
	}
	sort.Strings(out)
	return out
}

// Pods returns the embedded pod list with the given short name.
func Pods(name string) ([]job.Task, error) {
	file := "openb_pod_list_" + name + ".csv"
	b, err := embedded(file)
	if err != nil {
		return nil, fmt.Errorf("unknown embedded trace %q (known: %s)", name, strings.Join(Traces(), ", "))
	}
	return ReadPods(bytes.NewReader(b), file)
}

// GPUNodes returns the embedded 1213-node GPU cluster of the papers.
func GPUNodes() ([]cluster.NodeSpec, error) {
	const file = "openb_node_list_gpu_node.csv"
	b, err := embedded(file)
	if err != nil {
		return nil, err
	}
	return ReadNodes(bytes.NewReader(b), file)
}

// AllNodes returns the embedded 1523-node list (GPU and CPU-only nodes).
func AllNodes() ([]cluster.NodeSpec, error) {
	const file = "openb_node_list_all_node.csv"
	b, err := embedded(file)
	if err != nil {
		return nil, err
	}
	return ReadNodes(bytes.NewReader(b), file)
}
