// Package cedla reproduces the CE-DLA paper's evaluation (Kang, Lee and
// Kim, Energies 2022, Sec. 3): 160 single-GPU nodes of four types, seven
// days of 15-minute slots, DL training jobs and inference load, an
// electricity price series; CE-DLA (Problems 1 and 2, policy/cedla)
// against FIFO, EPRONS and PA-MBT, all evaluated by the slotted engine
// (sim.RunSlotted). Data and stand-ins: data/README.md and
// docs/reproduce-cedla.md.
package cedla

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/fit"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

//go:embed data/models.csv
var modelsCSV []byte

// ModelsFile is the embedded table's name in errors.
const ModelsFile = "models.csv"

// GPUs and DNNs are the paper's node types and models, in this order.
var (
	GPUs = []string{"GTX1060-3GB", "GTX1060-6GB", "RTX2060", "GTX1080"}
	DNNs = []string{"ResNet152", "VGG19", "InceptionV3"}
)

// quantities: name -> (per model, per GPU) keys it needs.
var quantities = map[string]struct{ model, gpu bool }{
	"train_10it": {false, true}, "latency": {false, true}, "gmacs": {true, false}, "tflops": {false, true}, "tdp": {false, true},
	"images_per_epoch": {false, false}, "gpu_idle": {false, false}, "node_idle": {false, false}, "cpu_active": {false, false},
	"train_share": {true, false}, "infer_share": {true, false},
}

// Row is one value of the table.
type Row struct {
	Quantity, Model, GPU, Unit, Source string
	Value                              float64
}

// Table is the parsed models table.
type Table struct {
	Rows []Row
	vals map[string]float64
}

func key(q, model, gpu string) string { return q + "|" + model + "|" + gpu }

// Get returns a value ("*" for a key the quantity does not vary by).
func (t *Table) Get(q, model, gpu string) (float64, bool) {
	v, ok := t.vals[key(q, model, gpu)]
	return v, ok
}

// ReadTable parses a models table: the header
// quantity,model,gpu,value,unit,source; known quantities, models and
// GPUs ("*" where the quantity does not vary by them); a finite value > 0
// (shares in (0, 1]); no duplicates. Errors name file, line and column.
func ReadTable(r io.Reader, file string) (*Table, error) {
	cr, head, err := trace.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	bad := cr.Bad
	want := []string{"quantity", "model", "gpu", "value", "unit", "source"}
	if !slices.Equal(head, want) {
		return nil, bad(1, "", fmt.Errorf("header %q, want %q", strings.Join(head, ","), strings.Join(want, ",")))
	}
	t := &Table{vals: map[string]float64{}}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, bad(line, "", err)
		}
		if len(rec) != len(want) {
			return nil, bad(line, "", fmt.Errorf("%d fields, want %d", len(rec), len(want)))
		}
		row := Row{Quantity: rec[0], Model: rec[1], GPU: rec[2], Unit: rec[4], Source: rec[5]}
		q, ok := quantities[row.Quantity]
		if !ok {
			return nil, bad(line, "quantity", fmt.Errorf("unknown quantity %q", row.Quantity))
		}
		if q.model != (row.Model != "*") || q.model && !slices.Contains(DNNs, row.Model) {
			return nil, bad(line, "model", fmt.Errorf("%q: %s wants %s", row.Model, row.Quantity, map[bool]string{true: "one of " + strings.Join(DNNs, ", "), false: "*"}[q.model]))
		}
		if q.gpu != (row.GPU != "*") || q.gpu && !slices.Contains(GPUs, row.GPU) {
			return nil, bad(line, "gpu", fmt.Errorf("%q: %s wants %s", row.GPU, row.Quantity, map[bool]string{true: "one of " + strings.Join(GPUs, ", "), false: "*"}[q.gpu]))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[3]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || strings.HasSuffix(row.Quantity, "_share") && v > 1 {
			return nil, bad(line, "value", fmt.Errorf("%q is not a finite number > 0%s", rec[3], map[bool]string{true: " and <= 1", false: ""}[strings.HasSuffix(row.Quantity, "_share")]))
		}
		if strings.TrimSpace(row.Source) == "" {
			return nil, bad(line, "source", errors.New("every value needs its source"))
		}
		row.Value = v
		k := key(row.Quantity, row.Model, row.GPU)
		if _, dup := t.vals[k]; dup {
			return nil, bad(line, "", fmt.Errorf("%s for model %s, gpu %s given twice", row.Quantity, row.Model, row.GPU))
		}
		t.vals[k] = v
		t.Rows = append(t.Rows, row)
	}
	// Required: everything Build uses except the derived stand-ins.
	for q, kind := range quantities {
		models, gpus := []string{"*"}, []string{"*"}
		if kind.model {
			models = DNNs
		}
		if kind.gpu {
			gpus = GPUs
			if q == "train_10it" {
				gpus = GPUs[:3] // GTX1080: stand-in when absent
			}
			if q == "latency" {
				gpus = []string{GPUs[0], GPUs[2]}
			}
		}
		for _, m := range models {
			for _, g := range gpus {
				if _, ok := t.vals[key(q, m, g)]; !ok {
					return nil, bad(len(t.Rows)+2, "", fmt.Errorf("missing %s for model %s, gpu %s", q, m, g))
				}
			}
		}
	}
	return t, nil
}

// ReadTableFile reads a models table file.
func ReadTableFile(path string) (*Table, error) {
	f, err := userfile.Open(path, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTable(f, path)
}

// EmbeddedTable is the embedded models table.
func EmbeddedTable() (*Table, error) { return ReadTable(bytes.NewReader(modelsCSV), ModelsFile) }

// Derived is the per-(model, GPU) performance and the true power of the
// nodes, derived from a Table (docs/reproduce-cedla.md, "models").
type Derived struct {
	// Train10[i][t] (s per 10 iterations), Latency[i][t] (s per request).
	Train10, Latency [][]float64
	// EpochSeconds[i][t] is mu^T; Mu[i][t] = 1 / Latency.
	EpochSeconds, Mu [][]float64
	F                []float64
	Idle             []hw.Watts
	TrainW           [][]hw.Watts
	inferBase        []hw.Watts
	inferSpan        [][]float64
	// StandIns says which values were derived where the text is silent.
	StandIns []string
}

// InferW is the true draw of a node of type t serving lambda requests/s
// of model i: idle plus the CPU and GPU's active draw in proportion to the
// utilisation lambda / mu.
func (d *Derived) InferW(i, t int, lambda float64) hw.Watts {
	rho := math.Min(lambda/d.Mu[i][t], 1)
	return d.inferBase[t] + hw.Watts(d.inferSpan[i][t]*rho)
}

// Derive builds the per-(model, GPU) values.
func Derive(tb *Table) *Derived {
	g := func(q, m, gpu string) float64 { v, _ := tb.Get(q, m, gpu); return v }
	nm, nt := len(DNNs), len(GPUs)
	d := &Derived{}
	train, lat, tf := make([]float64, nt), make([]float64, nt), make([]float64, nt)
	for t, gpu := range GPUs {
		tf[t] = g("tflops", "*", gpu)
		train[t], _ = tb.Get("train_10it", "*", gpu)
		lat[t], _ = tb.Get("latency", "*", gpu)
	}
	if train[3] == 0 {
		train[3] = train[1] * tf[1] / tf[3]
		d.StandIns = append(d.StandIns, fmt.Sprintf("GTX1080 training time (not quoted in the text): GTX1060-6GB's %.0f s x FP32 TFLOPS ratio %.2f/%.2f = %.1f s per 10 iterations", train[1], tf[1], tf[3], train[3]))
	}
	if lat[1] == 0 {
		lat[1] = lat[0] * train[1] / train[0]
		d.StandIns = append(d.StandIns, fmt.Sprintf("GTX1060-6GB latency (not quoted): GTX1060-3GB's %.3f s x the training-time ratio %.0f/%.0f = %.4f s", lat[0], train[1], train[0], lat[1]))
	}
	if lat[3] == 0 {
		lat[3] = lat[1] * tf[1] / tf[3]
		d.StandIns = append(d.StandIns, fmt.Sprintf("GTX1080 latency (not quoted; the text says it is close to the RTX2060's): GTX1060-6GB's x FP32 TFLOPS ratio = %.4f s", lat[3]))
	}
	var macs float64
	for _, m := range DNNs {
		macs += g("gmacs", m, "*")
	}
	d.StandIns = append(d.StandIns, "per-model split of each GPU's average training time and latency (Fig. 3 is not in the text): in proportion to the model's multiply-adds per image (ResNet152 11.3, VGG19 19.6, InceptionV3 5 G)")
	iters := g("images_per_epoch", "*", "*") / 32
	nodeIdle, gpuIdle, cpu := g("node_idle", "*", "*"), g("gpu_idle", "*", "*"), g("cpu_active", "*", "*")
	d.F, d.Idle, d.inferBase = tf, make([]hw.Watts, nt), make([]hw.Watts, nt)
	for t := range nt {
		d.Idle[t] = hw.Watts(nodeIdle + gpuIdle)
		d.inferBase[t] = d.Idle[t]
	}
	for i, m := range DNNs {
		share := float64(nm) * g("gmacs", m, "*") / macs
		d.Train10 = append(d.Train10, make([]float64, nt))
		d.Latency = append(d.Latency, make([]float64, nt))
		d.EpochSeconds = append(d.EpochSeconds, make([]float64, nt))
		d.Mu = append(d.Mu, make([]float64, nt))
		d.TrainW = append(d.TrainW, make([]hw.Watts, nt))
		d.inferSpan = append(d.inferSpan, make([]float64, nt))
		for t, gpu := range GPUs {
			tdp := g("tdp", "*", gpu)
			d.Train10[i][t] = train[t] * share
			d.Latency[i][t] = lat[t] * share
			d.EpochSeconds[i][t] = d.Train10[i][t] / 10 * iters
			d.Mu[i][t] = 1 / d.Latency[i][t]
			d.TrainW[i][t] = hw.Watts(nodeIdle + cpu + g("train_share", m, "*")*tdp)
			d.inferSpan[i][t] = cpu + g("infer_share", m, "*")*tdp - gpuIdle
		}
	}
	return d
}

// Fitted is the power models fitted by recursive least squares from
// measurement samples, with their held-out error.
type Fitted struct {
	// Train[i] = (alpha1, alpha2) of eq. 6; Infer[i] = alpha1..4 of eq. 9.
	Train [][2]float64
	Infer [][4]float64
	// MAPE (%) on held-out samples, per model.
	TrainMAPE, InferMAPE []float64
	Samples              int
}

// measurementNoise is the relative standard deviation of a power sample
// (a stand-in for nvidia-smi readings; docs/reproduce-cedla.md).
const measurementNoise = 0.03

// Fit samples the true power of every (model, GPU) with seeded noise and
// fits eq. 6 (training: alpha1 F + alpha2, above idle) and eq. 9
// (inference: alpha1 lambda + alpha2 F + alpha3 lambda / F + alpha4, above
// idle) per model by recursive least squares over the four GPU types; the
// MAPE is on a second, independent set of samples.
func Fit(d *Derived, seed uint64) (*Fitted, error) {
	rng := rand.New(rand.NewPCG(seed, 0xCED1A))
	nm, nt := len(DNNs), len(GPUs)
	f := &Fitted{Train: make([][2]float64, nm), Infer: make([][4]float64, nm), TrainMAPE: make([]float64, nm), InferMAPE: make([]float64, nm)}
	const reps = 20
	utils := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
	noisy := func(w float64) float64 { return w * (1 + measurementNoise*rng.NormFloat64()) }
	for i := range nm {
		tr, err := fit.NewRLS(2, 1e6, 1)
		if err != nil {
			return nil, err
		}
		in, _ := fit.NewRLS(4, 1e6, 1)
		for range reps {
			for t := range nt {
				idle := float64(d.Idle[t])
				if err := tr.Update([]float64{d.F[t], 1}, noisy(float64(d.TrainW[i][t]))-idle); err != nil {
					return nil, err
				}
				for _, u := range utils {
					lam := u * d.Mu[i][t]
					if err := in.Update([]float64{lam, d.F[t], lam / d.F[t], 1}, noisy(float64(d.InferW(i, t, lam)))-idle); err != nil {
						return nil, err
					}
					f.Samples++
				}
				f.Samples++
			}
		}
		copy(f.Train[i][:], tr.Theta)
		copy(f.Infer[i][:], in.Theta)
		var et, ei float64
		var nt2, ni int
		for range reps {
			for t := range nt {
				idle := float64(d.Idle[t])
				y := noisy(float64(d.TrainW[i][t]))
				et += math.Abs(tr.Predict([]float64{d.F[t], 1})+idle-y) / y
				nt2++
				for _, u := range utils {
					lam := u * d.Mu[i][t]
					y := noisy(float64(d.InferW(i, t, lam)))
					ei += math.Abs(in.Predict([]float64{lam, d.F[t], lam / d.F[t], 1})+idle-y) / y
					ni++
				}
			}
		}
		f.TrainMAPE[i], f.InferMAPE[i] = 100*et/float64(nt2), 100*ei/float64(ni)
	}
	return f, nil
}

// Models returns what the planners see: the performance model and the
// fitted power models, for count nodes of each type, with latency bounds
// bound[i] and the restart and turn-on costs in USD.
func (d *Derived) Models(f *Fitted, count int, bound []float64, restart, turnOn float64) *policy.SlotModels {
	nm, nt := len(DNNs), len(GPUs)
	m := &policy.SlotModels{Models: slices.Clone(DNNs), Bound: bound, Restart: restart, TurnOn: turnOn}
	for t, gpu := range GPUs {
		m.Types = append(m.Types, policy.SlotType{Name: gpu, Count: count, F: d.F[t], Idle: d.Idle[t]})
	}
	for i := range nm {
		m.Epochs = append(m.Epochs, make([]float64, nt))
		m.Mu = append(m.Mu, slices.Clone(d.Mu[i]))
		m.TrainW = append(m.TrainW, make([]hw.Watts, nt))
		m.InferBaseW = append(m.InferBaseW, make([]float64, nt))
		m.InferPerReqW = append(m.InferPerReqW, make([]float64, nt))
		for t := range nt {
			m.Epochs[i][t] = policy.SlotSeconds / d.EpochSeconds[i][t]
			a := f.Train[i]
			m.TrainW[i][t] = d.Idle[t] + hw.Watts(math.Max(a[0]*d.F[t]+a[1], 0))
			b := f.Infer[i]
			m.InferBaseW[i][t] = float64(d.Idle[t]) + math.Max(b[1]*d.F[t]+b[3], 0)
			m.InferPerReqW[i][t] = math.Max(b[0]+b[2]/d.F[t], 0)
		}
	}
	return m
}

// Truth is the engine's true behaviour of the nodes.
func (d *Derived) Truth(restartSeconds float64, boot hw.Joules) sim.SlotTruth {
	return sim.SlotTruth{TrainW: d.TrainW, InferW: d.InferW, RestartSeconds: restartSeconds, Boot: boot}
}
