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
	"sort"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

//go:embed data/*.csv.gz
var data embed.FS

// Source is the attribution printed with results that use the embedded trace.
const Source = "Alibaba cluster-trace-gpu-v2023 (openb), Weng et al. USENIX ATC'23; research/study use"

var nodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

var podColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}

// ParseError locates a bad field.
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

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

func newReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return cr
}

func field(rec []string, i int, file string, line int, header []string, min, max int64) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(rec[i]), 10, 64)
	if err != nil {
		return 0, &ParseError{File: file, Line: line, Column: header[i], Err: fmt.Errorf("%q is not an integer", rec[i])}
	}
	if v < min || v > max {
		return 0, &ParseError{File: file, Line: line, Column: header[i], Err: fmt.Errorf("%d out of range %d..%d", v, min, max)}
	}
	return v, nil
}

// ReadNodes parses a node list (sn,cpu_milli,memory_mib,gpu,model). file names
// the input in errors.
func ReadNodes(r io.Reader, file string) ([]cluster.NodeSpec, error) {
	cr := newReader(r)
	h, err := readHeader(cr, file, nodeColumns, len(nodeColumns))
	if err != nil {
		return nil, err
	}
	var out []cluster.NodeSpec
	seen := map[string]int{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Err: err}
		}
		if len(rec) != len(h) {
			return nil, &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, want %d", len(rec), len(h))}
		}
		s := cluster.NodeSpec{Name: strings.TrimSpace(rec[0]), GPUModel: strings.TrimSpace(rec[4])}
		if s.Name == "" {
			return nil, &ParseError{File: file, Line: line, Column: "sn", Err: errors.New("empty node name")}
		}
		if prev, dup := seen[s.Name]; dup {
			return nil, &ParseError{File: file, Line: line, Column: "sn", Err: fmt.Errorf("node %q already on line %d", s.Name, prev)}
		}
		seen[s.Name] = line
		if s.CPUMilli, err = field(rec, 1, file, line, h, 1, 1<<40); err != nil {
			return nil, err
		}
		if s.MemMiB, err = field(rec, 2, file, line, h, 0, 1<<40); err != nil {
			return nil, err
		}
		g, err := field(rec, 3, file, line, h, 0, 64)
		if err != nil {
			return nil, err
		}
		s.GPUs = int(g)
		if s.GPUs > 0 && s.GPUModel == "" {
			return nil, &ParseError{File: file, Line: line, Column: "model", Err: fmt.Errorf("%d GPUs without a model", s.GPUs)}
		}
		if s.GPUs == 0 {
			s.GPUModel = ""
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadPods parses a pod list, either the 11-column form or the 5-column form
// of the multigpu variants. Tasks get IDs 0..n-1 in file order; SubmitMs and
// Work come from creation_time and deletion_time when present.
func ReadPods(r io.Reader, file string) ([]job.Task, error) {
	cr := newReader(r)
	h, err := readHeader(cr, file, podColumns, 5)
	if err != nil {
		return nil, err
	}
	if len(h) != 5 && len(h) != len(podColumns) {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("header has %d columns, want 5 or %d", len(h), len(podColumns))}
	}
	var out []job.Task
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Err: err}
		}
		if len(rec) != len(h) {
			return nil, &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, want %d", len(rec), len(h))}
		}
		t := job.Task{ID: job.ID(len(out)), Name: strings.TrimSpace(rec[0]), Kind: job.Training, Class: -1}
		if t.Name == "" {
			return nil, &ParseError{File: file, Line: line, Column: "name", Err: errors.New("empty pod name")}
		}
		if t.CPUMilli, err = field(rec, 1, file, line, h, 0, 1<<40); err != nil {
			return nil, err
		}
		if t.MemMiB, err = field(rec, 2, file, line, h, 0, 1<<40); err != nil {
			return nil, err
		}
		g, err := field(rec, 3, file, line, h, 0, 8)
		if err != nil {
			return nil, err
		}
		t.GPUCount = int(g)
		if t.GPUMilli, err = field(rec, 4, file, line, h, 0, job.MilliPerGPU); err != nil {
			return nil, err
		}
		if len(h) > 5 {
			for _, s := range strings.Split(rec[5], "|") {
				if s = strings.TrimSpace(s); s != "" {
					t.GPUSpec = append(t.GPUSpec, s)
				}
			}
			c, err := field(rec, 8, file, line, h, 0, 1<<40)
			if err != nil {
				return nil, err
			}
			d, err := field(rec, 9, file, line, h, 0, 1<<40)
			if err != nil {
				return nil, err
			}
			if d < c {
				return nil, &ParseError{File: file, Line: line, Column: "deletion_time", Err: fmt.Errorf("%d before creation_time %d", d, c)}
			}
			t.SubmitMs = c * 1000
			t.Work = float64(d - c)
		}
		if err := t.Demand.Validate(); err != nil {
			return nil, &ParseError{File: file, Line: line, Err: err}
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, &ParseError{File: file, Line: 2, Err: errors.New("no pods")}
	}
	return out, nil
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
