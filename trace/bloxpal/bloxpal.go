// Package bloxpal reads the co-location measurements of hal-uw/blox-pal
// (blox_exp/colocate_info): the training speed of DL jobs alone
// (raw_single.csv) and the normalised speeds of two jobs sharing the same
// GPUs (norm_speed.csv), and embeds both files (data/README.md; MIT
// license). What the normalised speeds are normalised to is worked out in
// data/README.md and docs/reproduce-eaco.md: every speed is a fraction of
// the fastest isolated configuration of the same model on the same number
// of GPUs in raw_single.csv.
package bloxpal

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/trace"
)

//go:embed data/norm_speed.csv
var normCSV []byte

//go:embed data/raw_single.csv
var singleCSV []byte

// Names the embedded files are read under (in errors and outputs).
const (
	EmbeddedPairs  = "blox-pal:norm_speed.csv"
	EmbeddedSingle = "blox-pal:raw_single.csv"
)

// Source attributes the embedded data.
const Source = "blox-pal co-location measurements (hal-uw/blox-pal @ da726cab, blox_exp/colocate_info, MIT)"

// Empty is the model name norm_speed.csv gives the second job of a row in
// which the first job ran alone.
const Empty = "Empty"

// NA is the files' "not applicable" (no pipeline strategy, no shared ranks).
const NA = "NA"

// Bounds of the numbers: a GPU count past MaxGPUs, a raw speed past
// MaxSpeed or a normalised speed outside [0, 1] is an input error. The
// normalised speeds are fractions of the fastest isolated configuration
// (see the package comment), so 1 is their upper end; NaN and infinities
// never pass.
const (
	MaxGPUs  = 64
	MaxSpeed = 1e6
)

// PairColumns and SingleColumns are the two files' headers.
var (
	PairColumns   = []string{"index", "model1", "dataset1", "gpu_num1", "batch_size1", "speed1", "co_pipeline_rank", "pipeline_strategy", "model2", "dataset2", "gpu_num2", "batch_size2", "speed2"}
	SingleColumns = []string{"index", "model", "dataset", "gpu_num", "batch_size", "speed", "pipeline_strategy"}
)

// Config is one job configuration.
type Config struct {
	Model, Dataset string
	GPUs           int
	// Batch is the batch size as written: per GPU for the CNN-type
	// models ("32"), global/micro-batch for the Megatron models ("256/16").
	Batch string
	// Strategy is NA (plain data parallel), a pipeline split (layers per
	// stage, "6,6"), TP24 or DP24 (tensor or data parallel); norm_speed.csv
	// gives it for the first job of a row only, so a second job's is empty.
	Strategy string
}

// Type names the configuration without its GPU count: model (dataset,
// batch, strategy when there is one).
func (c Config) Type() string {
	s := fmt.Sprintf("%s (%s, batch %s", c.Model, c.Dataset, c.Batch)
	if c.Strategy != "" && c.Strategy != NA {
		s += ", " + c.Strategy
	}
	return s + ")"
}

func (c Config) String() string { return fmt.Sprintf("%s x%d", c.Type(), c.GPUs) }

// Single is one row of raw_single.csv: a job alone.
type Single struct {
	Config
	// Index is the file's index column (it restarts within the file).
	Index int
	// Speed is the measured training speed (the file gives no unit; it
	// grows with the GPU count for the CNNs, so it is a job total).
	Speed float64
	Line  int
}

// Row is one row of norm_speed.csv: job A with co-tenant B on the same
// GPUs, or job A alone (Alone; B is then zero).
type Row struct {
	Index int
	A, B  Config
	// SpeedA and SpeedB are the normalised speeds, in [0, 1].
	SpeedA, SpeedB float64
	// CoRanks are the GPU ranks the jobs share ("0,1"; NA when alone).
	CoRanks string
	Alone   bool
	Line    int
}

type fields struct {
	c    *trace.CSV
	rec  []string
	line int
	cols []string
}

func (f *fields) bad(col string, err error) error { return f.c.Bad(f.line, col, err) }

func (f *fields) text(i int) (string, error) {
	s := strings.TrimSpace(f.rec[i])
	if s == "" {
		return "", f.bad(f.cols[i], errors.New("empty"))
	}
	return s, nil
}

func (f *fields) integer(i, lo, hi int) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(f.rec[i]))
	if err != nil || v < lo || v > hi {
		return 0, f.bad(f.cols[i], fmt.Errorf("%q is not an integer in %d..%d", f.rec[i], lo, hi))
	}
	return v, nil
}

func (f *fields) number(i int, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(f.rec[i]), 64)
	if err != nil || math.IsNaN(v) || !(v >= 0 && v <= hi) {
		return 0, f.bad(f.cols[i], fmt.Errorf("%q is not a number in [0, %g]", f.rec[i], hi))
	}
	return v, nil
}

// batch checks a batch size: a positive integer, or two of them
// separated by a slash.
func (f *fields) batch(i int) (string, error) {
	s, err := f.text(i)
	if err != nil {
		return "", err
	}
	for _, p := range strings.Split(s, "/") {
		if v, err := strconv.Atoi(p); err != nil || v < 1 {
			return "", f.bad(f.cols[i], fmt.Errorf("%q is not a batch size (N or N/M, positive integers)", s))
		}
	}
	if strings.Count(s, "/") > 1 {
		return "", f.bad(f.cols[i], fmt.Errorf("%q is not a batch size (N or N/M, positive integers)", s))
	}
	return s, nil
}

// config reads model, dataset, gpu_num, batch_size at columns i..i+3.
func (f *fields) config(i int) (Config, error) {
	var c Config
	var err error
	if c.Model, err = f.text(i); err != nil {
		return c, err
	}
	if c.Model == Empty {
		return c, f.bad(f.cols[i], errors.New("Empty is not a model here"))
	}
	if c.Dataset, err = f.text(i + 1); err != nil {
		return c, err
	}
	if c.GPUs, err = f.integer(i+2, 1, MaxGPUs); err != nil {
		return c, err
	}
	c.Batch, err = f.batch(i + 3)
	return c, err
}

func open(r io.Reader, name string, cols []string) (*fields, error) {
	c, head, err := trace.OpenCSV(r, name)
	if err != nil {
		return nil, err
	}
	if strings.Join(head, ",") != strings.Join(cols, ",") {
		return nil, c.Bad(1, "", fmt.Errorf("header %q, want %q", strings.Join(head, ","), strings.Join(cols, ",")))
	}
	return &fields{c: c, cols: cols, line: 1}, nil
}

// next reads a record; false at the end of the file.
func (f *fields) next() (bool, error) {
	rec, err := f.c.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		line := f.line + 1
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			line = pe.StartLine
		}
		return false, f.c.Bad(line, "", err)
	}
	f.rec = rec
	f.line, _ = f.c.FieldPos(0)
	if len(rec) != len(f.cols) {
		return false, f.bad("", fmt.Errorf("%d fields, want %d", len(rec), len(f.cols)))
	}
	return true, nil
}

// ReadSingle parses raw_single.csv (header SingleColumns). Errors are
// trace.ParseError naming file, line and column.
func ReadSingle(r io.Reader, name string) ([]Single, error) {
	f, err := open(r, name, SingleColumns)
	if err != nil {
		return nil, err
	}
	var out []Single
	for {
		ok, err := f.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		var s Single
		if s.Index, err = f.integer(0, 0, math.MaxInt32); err != nil {
			return nil, err
		}
		if s.Config, err = f.config(1); err != nil {
			return nil, err
		}
		if s.Speed, err = f.number(5, MaxSpeed); err != nil {
			return nil, err
		}
		if s.Strategy, err = f.text(6); err != nil {
			return nil, err
		}
		s.Line = f.line
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, f.c.Bad(2, "", errors.New("no rows"))
	}
	return out, nil
}

// ReadPairs parses norm_speed.csv (header PairColumns). A row whose
// model2 is Empty is job 1 alone: its dataset2 must be NA and its
// gpu_num2, batch_size2 and speed2 zero. Errors are trace.ParseError
// naming file, line and column.
func ReadPairs(r io.Reader, name string) ([]Row, error) {
	f, err := open(r, name, PairColumns)
	if err != nil {
		return nil, err
	}
	var out []Row
	for {
		ok, err := f.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		var w Row
		if w.Index, err = f.integer(0, 0, math.MaxInt32); err != nil {
			return nil, err
		}
		if w.A, err = f.config(1); err != nil {
			return nil, err
		}
		if w.SpeedA, err = f.number(5, 1); err != nil {
			return nil, err
		}
		if w.CoRanks, err = f.text(6); err != nil {
			return nil, err
		}
		if w.A.Strategy, err = f.text(7); err != nil {
			return nil, err
		}
		if strings.TrimSpace(f.rec[8]) == Empty {
			w.Alone = true
			w.B.Model = Empty
			want := map[int]string{9: NA, 10: "0", 11: "0"}
			for i := 9; i <= 11; i++ {
				if strings.TrimSpace(f.rec[i]) != want[i] {
					return nil, f.bad(f.cols[i], fmt.Errorf("%q: a job alone (model2 Empty) has %s here", f.rec[i], want[i]))
				}
			}
			if v, err := f.number(12, 1); err != nil || v != 0 {
				return nil, f.bad(f.cols[12], fmt.Errorf("%q: a job alone (model2 Empty) has speed2 0", f.rec[12]))
			}
		} else {
			if w.B, err = f.config(8); err != nil {
				return nil, err
			}
			if w.SpeedB, err = f.number(12, 1); err != nil {
				return nil, err
			}
		}
		w.Line = f.line
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, f.c.Bad(2, "", errors.New("no rows"))
	}
	return out, nil
}

// Data is both files.
type Data struct {
	Singles []Single
	Rows    []Row
}

// Embedded reads the embedded copies of the two files.
func Embedded() (*Data, error) {
	s, err := ReadSingle(bytes.NewReader(singleCSV), EmbeddedSingle)
	if err != nil {
		return nil, err
	}
	p, err := ReadPairs(bytes.NewReader(normCSV), EmbeddedPairs)
	if err != nil {
		return nil, err
	}
	return &Data{Singles: s, Rows: p}, nil
}
