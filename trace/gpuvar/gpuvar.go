// Package gpuvar reads per-GPU variability measurements (the TACC Longhorn
// V100 runs of Sinha et al. SC'22 / Jain et al. SC'24): one record per run
// of an application on one GPU, with its performance, clocks, temperature
// and power.
package gpuvar

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

//go:embed data/*.csv.gz
var data embed.FS

// Source attributes the embedded data.
const Source = "TACC Longhorn V100 per-GPU runs (hal-uw/blox-pal, MIT; Sinha et al. SC'22, Jain et al. SC'24)"

// Run is one application run on one GPU.
type Run struct {
	App     string
	Device  string // GPU UUID
	Perf    float64
	FreqMHz float64
	MemMHz  float64
	TempC   float64
	PowerW  float64
	Line    int
}

// ParseError locates a bad line or field: file, line, column.
type ParseError = trace.ParseError

// maxValue bounds perf, core and memory clock (MHz), temperature (C) and
// power (W): beyond them a value is an input error (one GPU never draws
// 10 kW), and NaN or infinity never passes.
var maxValue = [5]float64{1e12, 1e5, 1e5, 200, 1e4}

// Read parses one aggregated CSV for application app. Power is the run's
// mean power where the file has it (mean_pwr), else pwr; the memory clock is
// memfreq, else median_memfreq.
func Read(r io.Reader, file, app string) ([]Run, error) {
	r, err := userfile.Reader(r, file, userfile.Table)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("header: %w", err)}
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	pick := func(names ...string) (string, int, error) {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return n, i, nil
			}
		}
		return "", 0, &ParseError{File: file, Line: 1, Err: fmt.Errorf("no column %s", strings.Join(names, " or "))}
	}
	type c struct {
		name string
		i    int
	}
	var cols [6]c
	for k, names := range [][]string{{"uuid"}, {"perf"}, {"freq"}, {"memfreq", "median_memfreq"}, {"temp"}, {"mean_pwr", "pwr"}} {
		n, i, err := pick(names...)
		if err != nil {
			return nil, err
		}
		cols[k] = c{n, i}
	}
	var out []Run
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{File: file, Line: line, Err: err}
		}
		if len(rec) != len(head) {
			return nil, &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, want %d", len(rec), len(head))}
		}
		r := Run{App: app, Device: strings.TrimSpace(rec[cols[0].i]), Line: line}
		if r.Device == "" {
			return nil, &ParseError{File: file, Line: line, Column: "uuid", Err: errors.New("empty GPU UUID")}
		}
		vals := [5]*float64{&r.Perf, &r.FreqMHz, &r.MemMHz, &r.TempC, &r.PowerW}
		for k, p := range vals {
			cc := cols[k+1]
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[cc.i]), 64)
			if err != nil || !(v >= 0 && v <= maxValue[k]) {
				return nil, &ParseError{File: file, Line: line, Column: cc.name, Err: fmt.Errorf("%q is not a number in [0, %g]", rec[cc.i], maxValue[k])}
			}
			*p = v
		}
		if r.PowerW == 0 {
			return nil, &ParseError{File: file, Line: line, Column: cols[5].name, Err: errors.New("zero power")}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, &ParseError{File: file, Line: 2, Err: errors.New("no runs")}
	}
	return out, nil
}

// Apps are the embedded applications, from the least to the most power-hungry.
var Apps = []string{"pagerank", "bert", "resnet", "sgemm"}

// Longhorn returns the embedded runs of every application.
func Longhorn() ([]Run, error) {
	var all []Run
	for _, app := range Apps {
		file := app + "-longhorn-agg.csv"
		b, err := data.ReadFile("data/" + file + ".gz")
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		runs, err := Read(zr, file, app)
		if err != nil {
			return nil, err
		}
		all = append(all, runs...)
	}
	return all, nil
}
