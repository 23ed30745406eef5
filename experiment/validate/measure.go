// Package validate checks wattsched's power models against public power
// measurements: `wattsched validate power`. It reads the measurement files
// it can map onto a model's inputs, predicts each measured point with each
// model that claims to cover it, and reports the error per model, GPU
// model and workload (docs/power-models.md).
package validate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Point is one measured average power of one GPU running one workload.
type Point struct {
	// Source is the data set ("zeus-nsdi23", ...); File the file read,
	// relative to the traces folder; Line its line (1 is the header).
	Source, File string
	Line         int
	// GPU is the GPU model as the source names it (V100, A40, ...).
	GPU string
	// Workload names what ran (dataset/network, model, benchmark).
	Workload string
	// Setting is the knob the row was measured at ("limit 150 W",
	// "1410 MHz", "" when none), for the points file.
	Setting string
	// Knob names the setting swept in the source ("power limit W",
	// "frequency MHz"; "" when none) and KnobValue is its value on this
	// row: the error by setting groups on them.
	Knob      string
	KnobValue float64
	// Series names the measured curve a row belongs to where a model is
	// fitted per curve (Perseus: "stage 0 forward"); "" otherwise.
	Series string
	// Device identifies the GPU a row was measured on where the source
	// names it (Longhorn: the uuid column); "" otherwise.
	Device string
	// Watts is the measured average power of one GPU.
	Watts float64
}

// source is one measurement file and how its rows map onto Points.
type source struct {
	name, file, gpu string
	// workload gives a row's workload from its fields by column name.
	workload func(get func(string) string) string
	setting  func(get func(string) string) string
	// series gives a row's curve (nil: none); deviceCol is the column
	// naming the GPU ("" when none).
	series    func(get func(string) string) string
	deviceCol string
	// knobCol is the column of the swept setting ("" when none) and
	// knob its name with unit.
	knobCol, knob string
	// watts gives the row's measured power; field names the column(s)
	// it reads, for errors.
	watts func(get func(string) string) (float64, string, error)
	cols  []string
}

// sources are the measurement files the study reads, in a fixed order.
// Each folder's README under the traces folder gives its columns and
// licence.
func sources() []source {
	var out []source
	col := func(c string) func(func(string) string) (float64, string, error) {
		return func(get func(string) string) (float64, string, error) {
			v, err := strconv.ParseFloat(strings.TrimSpace(get(c)), 64)
			return v, c, err
		}
	}
	// Zeus (NSDI'23): average power per GPU model against power limit,
	// batch size and workload.
	for _, g := range []string{"v100", "a40", "rtx6000", "p100"} {
		out = append(out, source{name: "zeus-nsdi23", file: "zeus-nsdi23/summary_power_" + g + ".csv", gpu: strings.ToUpper(g),
			cols:     []string{"dataset", "network", "batch_size", "power_limit", "average_power"},
			workload: func(get func(string) string) string { return get("dataset") + "/" + get("network") },
			setting: func(get func(string) string) string {
				return "limit " + get("power_limit") + " W, batch " + get("batch_size")
			},
			knobCol: "power_limit", knob: "power limit W",
			watts: col("average_power")})
	}
	// Perseus (SOSP'24): per-stage forward/backward time and energy at
	// each GPU frequency; average power is energy/time.
	for _, f := range []struct{ model, gpu, tag string }{
		{"bloom", "A100-SXM", "a100_sxm"}, {"gpt3-175b", "A100-SXM", "a100_sxm"},
		{"bloom", "A40", "a40"}, {"gpt3-175b", "A40", "a40"},
	} {
		out = append(out, source{name: "perseus-sosp24-dvfs", file: "perseus-sosp24-dvfs/stage_profile/" + f.model + "+" + f.tag + "_bf16.csv", gpu: f.gpu,
			cols:     []string{"stage", "instruction", "frequency", "time", "energy"},
			workload: func(func(string) string) string { return f.model },
			series: func(get func(string) string) string {
				return "stage " + strings.TrimSpace(get("stage")) + " " + strings.TrimSpace(get("instruction"))
			},
			setting: func(get func(string) string) string { return get("frequency") + " MHz" },
			knobCol: "frequency", knob: "frequency MHz",
			watts: func(get func(string) string) (float64, string, error) {
				e, err := strconv.ParseFloat(strings.TrimSpace(get("energy")), 64)
				if err != nil {
					return 0, "energy", err
				}
				t, err := strconv.ParseFloat(strings.TrimSpace(get("time")), 64)
				if err != nil {
					return 0, "time", err
				}
				if !(t > 0) || math.IsInf(t, 0) {
					return 0, "time", fmt.Errorf("%v, want a finite time > 0", t)
				}
				return e / t, "energy", nil
			}})
	}
	// Sinha et al. (SC'22) / PAL (SC'24): per-device power of TACC
	// Longhorn's V100s under SGEMM, ResNet, BERT and PageRank (the uuid
	// column names the GPU).
	for _, f := range []struct{ exp, col string }{{"sgemm", "pwr"}, {"resnet", "mean_pwr"}, {"bert", "mean_pwr"}, {"pagerank", "pwr"}} {
		out = append(out, source{name: "gpu-variability-pal", file: "gpu-variability-pal/longhorn/" + f.exp + "-longhorn-agg.csv", gpu: "V100-Longhorn",
			cols: []string{"exp", "uuid", f.col}, deviceCol: "uuid",
			workload: func(get func(string) string) string { return get("exp") },
			setting:  func(func(string) string) string { return "" },
			watts:    col(f.col)})
	}
	return out
}

// read reads one source's file under dir. A missing column, an unparsable,
// non-finite, zero or negative power is an error naming the file, line and
// field.
func (s source) read(dir string) ([]Point, error) {
	path := filepath.Join(dir, filepath.FromSlash(s.file))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.file, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read %s line 1: %w", s.file, err)
	}
	idx := make(map[string]int, len(head))
	for i, h := range head {
		h = strings.TrimSpace(h)
		if _, dup := idx[h]; !dup {
			idx[h] = i
		}
	}
	for _, c := range s.cols {
		if _, ok := idx[c]; !ok {
			return nil, fmt.Errorf("read %s line 1: field %s: missing column (have %s)", s.file, c, strings.Join(head, ","))
		}
	}
	var out []Point
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s line %d: %w", s.file, line, err)
		}
		get := func(c string) string { return rec[idx[c]] }
		w, field, err := s.watts(get)
		if err != nil {
			return nil, fmt.Errorf("read %s line %d field %s: %w", s.file, line, field, err)
		}
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("read %s line %d field %s: power %v W, want a finite number > 0", s.file, line, field, w)
		}
		pt := Point{Source: s.name, File: s.file, Line: line, GPU: s.gpu, Workload: s.workload(get), Setting: s.setting(get), Watts: w}
		if s.series != nil {
			pt.Series = s.series(get)
		}
		if s.deviceCol != "" {
			if pt.Device = strings.TrimSpace(get(s.deviceCol)); pt.Device == "" {
				return nil, fmt.Errorf("read %s line %d field %s: empty, want the GPU's identifier", s.file, line, s.deviceCol)
			}
		}
		if s.knobCol != "" {
			v, err := strconv.ParseFloat(strings.TrimSpace(get(s.knobCol)), 64)
			if err == nil && !(v > 0 && !math.IsInf(v, 0)) {
				err = fmt.Errorf("%v, want a finite number > 0", v)
			}
			if err != nil {
				return nil, fmt.Errorf("read %s line %d field %s: %w", s.file, line, s.knobCol, err)
			}
			pt.Knob, pt.KnobValue = s.knob, v
		}
		out = append(out, pt)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read %s: no rows", s.file)
	}
	return out, nil
}
