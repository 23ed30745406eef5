package perf

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
)

//go:embed data/*.csv
var dataFS embed.FS

// The library's GPU: an A100 (the A100 measurements of Perseus and
// ElasticFlow are the only public ones that give both frequency and
// GPU-count scaling), standing in for PowerFlow's V100s.
const (
	// LibraryGPU names the hw catalog entry of the library's GPU.
	LibraryGPU = "A100"
	// GPUsPerNode is the node size the ElasticFlow scaling was measured on.
	GPUsPerNode = 8
	// MaxGPUs is the largest measured GPU count.
	MaxGPUs = 64
	// syncDynamicShare is the share of compute-phase dynamic power a GPU
	// draws while it synchronises gradients. No public measurement in the
	// shared traces separates it; 0.3 is an assumption (docs say so).
	syncDynamicShare = 0.3
)

// DNN is one of PowerFlow's Table 1 models and the measurements that stand
// in for its profiles.
type DNN struct {
	Name string
	// Scaling is the ElasticFlow A100 throughput file, Power the Zeus
	// network whose V100 power-vs-batch-size curve is used.
	Scaling, Power string
	// Batches are the global batch sizes with measured scaling that lie in
	// Table 1's range for the model.
	Batches []int
	// StandIn says what stands in for what.
	StandIn string
}

// DNNs are PowerFlow's Table 1 models.
var DNNs = []DNN{
	{"ResNet18", "resnet50", "resnet50", []int{64, 128, 256}, "ResNet-50 measurements (ElasticFlow A100 scaling, Zeus V100 power) stand in for ResNet-18"},
	{"VGG16", "vgg16", "resnet50", []int{64, 128, 256}, "ElasticFlow A100 VGG16 scaling; Zeus has no VGG16, so ResNet-50's power-vs-batch curve stands in"},
	{"InceptionV3", "inception3", "resnet50", []int{64, 128}, "ElasticFlow A100 Inception-v3 scaling; ResNet-50's Zeus power curve stands in"},
	{"GPT2", "gpt2", "bert_base_uncased", []int{128}, "ElasticFlow A100 GPT-2 scaling (batch 128; 256 is outside Table 1's 8-128); Zeus BERT-base power curve stands in"},
	{"DeepSpeech2", "deepspeech2", "deepspeech2", []int{32, 64}, "ElasticFlow A100 DeepSpeech2 scaling and Zeus V100 DeepSpeech2 power curve"},
}

// Counts are the GPU counts the library is measured at (powers of two).
var Counts = []int{1, 2, 4, 8, 16, 32, 64}

// Library is the ground truth the simulator runs jobs with: per (DNN,
// global batch), the step time and per-GPU power at any GPU count and
// supported frequency, built from real measurements only.
type Library struct {
	// FreqsMHz are the supported core frequencies, ascending (Perseus A100
	// SXM: 855-1410 MHz in 15 MHz steps, 38 frequencies).
	FreqsMHz []int
	// TimeRatio[i] and PowerRatio[i] are compute time and GPU power at
	// FreqsMHz[i] relative to the highest frequency.
	TimeRatio, PowerRatio []float64
	// IdleW and TDPW are the GPU's idle and maximum power.
	IdleW, TDPW float64
	profiles    map[key]*Profile
}

type key struct {
	dnn   string
	batch int
}

// Profile is the truth for one (DNN, global batch).
type Profile struct {
	DNN   string
	Batch int
	// IterSec[k] is the measured step time at Counts[k] GPUs and the
	// highest frequency (0 where not measured).
	IterSec [7]float64
	// maxCount is the largest measured count.
	maxCount int
	// power is the per-GPU power at the highest frequency by local batch.
	power func(bs float64) float64
	lib   *Library
}

var (
	libOnce sync.Once
	lib     *Library
	libErr  error
)

// Load returns the embedded library (built once).
func Load(idleW, tdpW float64) (*Library, error) {
	libOnce.Do(func() { lib, libErr = build() })
	if libErr != nil {
		return nil, libErr
	}
	l := *lib
	l.IdleW, l.TDPW = idleW, tdpW
	l.profiles = map[key]*Profile{}
	for k, p := range lib.profiles {
		q := *p
		q.lib = &l
		l.profiles[k] = &q
	}
	return &l, nil
}

func readCSV(name string) ([][]string, error) {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("perf: %s: %w", name, err)
	}
	return rows, nil
}

func num(name string, line int, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("perf: %s:%d: %q is not a number", name, line, s)
	}
	return v, nil
}

func build() (*Library, error) {
	l := &Library{profiles: map[key]*Profile{}}
	// Frequency response: forward+backward time and energy summed over all
	// pipeline stages of both Perseus A100 profiles.
	tSum, eSum := map[int]float64{}, map[int]float64{}
	for _, f := range []string{"perseus_gpt3-175b_a100.csv", "perseus_bloom_a100.csv"} {
		rows, err := readCSV(f)
		if err != nil {
			return nil, err
		}
		for i, r := range rows[1:] {
			mhz, err := num(f, i+2, r[2])
			if err != nil {
				return nil, err
			}
			t, err := num(f, i+2, r[3])
			if err != nil {
				return nil, err
			}
			e, err := num(f, i+2, r[4])
			if err != nil {
				return nil, err
			}
			tSum[int(mhz)] += t
			eSum[int(mhz)] += e
		}
	}
	for f := range tSum {
		l.FreqsMHz = append(l.FreqsMHz, f)
	}
	slices.Sort(l.FreqsMHz)
	top := l.FreqsMHz[len(l.FreqsMHz)-1]
	for _, f := range l.FreqsMHz {
		l.TimeRatio = append(l.TimeRatio, tSum[f]/tSum[top])
		l.PowerRatio = append(l.PowerRatio, (eSum[f]/tSum[f])/(eSum[top]/tSum[top]))
	}
	// Power vs batch size: Zeus V100 average power at the highest power
	// limit (250 W), mean over datasets and optimizers, as a share of it.
	rows, err := readCSV("zeus_power_v100.csv")
	if err != nil {
		return nil, err
	}
	type pk struct {
		net string
		bs  int
	}
	ps, pn := map[pk]float64{}, map[pk]int{}
	for i, r := range rows[1:] {
		if r[4] != "250" {
			continue
		}
		bs, err := num("zeus_power_v100.csv", i+2, r[2])
		if err != nil {
			return nil, err
		}
		w, err := num("zeus_power_v100.csv", i+2, r[6])
		if err != nil {
			return nil, err
		}
		k := pk{r[1], int(bs)}
		ps[k] += w / 250
		pn[k]++
	}
	curve := func(net string) (func(bs float64) float64, error) {
		var xs, ys []float64
		var bss []int
		for k := range ps {
			if k.net == net {
				bss = append(bss, k.bs)
			}
		}
		slices.Sort(bss)
		for _, b := range bss {
			k := pk{net, b}
			xs, ys = append(xs, math.Log(float64(b))), append(ys, ps[k]/float64(pn[k]))
		}
		if len(xs) < 2 {
			return nil, fmt.Errorf("perf: no Zeus power curve for %s", net)
		}
		return func(bs float64) float64 { return interp(xs, ys, math.Log(bs)) }, nil
	}
	for _, d := range DNNs {
		pw, err := curve(d.Power)
		if err != nil {
			return nil, err
		}
		name := "ef_a100_" + d.Scaling + ".csv"
		rows, err := readCSV(name)
		if err != nil {
			return nil, err
		}
		for i, r := range rows[1:] {
			bs, err := strconv.Atoi(r[0])
			if err != nil {
				return nil, fmt.Errorf("perf: %s:%d: batch %q", name, i+2, r[0])
			}
			if !slices.Contains(d.Batches, bs) {
				continue
			}
			p := &Profile{DNN: d.Name, Batch: bs, power: pw}
			for k := range Counts {
				if k+1 >= len(r) || r[k+1] == "" {
					break
				}
				tp, err := num(name, i+2, r[k+1])
				if err != nil {
					return nil, err
				}
				if tp <= 0 {
					break
				}
				p.IterSec[k], p.maxCount = 1/tp, Counts[k]
			}
			l.profiles[key{d.Name, bs}] = p
		}
		for _, b := range d.Batches {
			if l.profiles[key{d.Name, b}] == nil {
				return nil, fmt.Errorf("perf: %s has no measured scaling at batch %d", d.Name, b)
			}
		}
	}
	return l, nil
}

// interp interpolates linearly in ys over ascending xs, clamping outside.
func interp(xs, ys []float64, x float64) float64 {
	if x <= xs[0] {
		return ys[0]
	}
	for i := 1; i < len(xs); i++ {
		if x <= xs[i] {
			w := (x - xs[i-1]) / (xs[i] - xs[i-1])
			return ys[i-1] + w*(ys[i]-ys[i-1])
		}
	}
	return ys[len(ys)-1]
}

// Profile returns the truth for a DNN and global batch, or nil.
func (l *Library) Profile(dnn string, batch int) *Profile { return l.profiles[key{dnn, batch}] }

// FreqIndex returns the index of mhz in FreqsMHz, or -1.
func (l *Library) FreqIndex(mhz int) int {
	i, ok := slices.BinarySearch(l.FreqsMHz, mhz)
	if !ok {
		return -1
	}
	return i
}

// MaxMHz is the default (highest) frequency.
func (l *Library) MaxMHz() int { return l.FreqsMHz[len(l.FreqsMHz)-1] }

// MaxGPUs is the largest GPU count measured for the profile.
func (p *Profile) MaxGPUs() int { return p.maxCount }

// countIndex returns k with Counts[k] == n, or -1.
func countIndex(n int) int {
	for k, c := range Counts {
		if c == n {
			return k
		}
	}
	return -1
}

// Truth returns the true step time (s) and the true average power per GPU
// (W) of the job on n GPUs (a measured power of two, packed on
// ceil(n/GPUsPerNode) nodes) at frequency index fi.
//
// Construction (docs/reproduce-powerflow.md): the measured step time T(n)
// splits into compute T(1)/n, which scales with frequency as Perseus'
// measured compute time does, and the rest (synchronisation and
// small-batch inefficiency), which does not. Compute-phase power is Zeus'
// power at the per-GPU batch size scaled to this GPU's TDP and by Perseus'
// measured power ratio; during the rest a GPU draws idle power plus
// syncDynamicShare of the compute phase's dynamic power.
func (p *Profile) Truth(n, fi int) (iterSec, gpuW float64) {
	k := countIndex(n)
	if k < 0 || p.IterSec[k] == 0 {
		panic(fmt.Sprintf("perf: %s batch %d has no measurement at %d GPUs", p.DNN, p.Batch, n))
	}
	l := p.lib
	comp := p.IterSec[0] / float64(n)
	rest := math.Max(0, p.IterSec[k]-comp)
	tc := comp * l.TimeRatio[fi]
	pc := p.power(float64(p.Batch)/float64(n)) * l.TDPW * l.PowerRatio[fi]
	ps := l.IdleW + syncDynamicShare*math.Max(0, pc-l.IdleW)
	t := tc + rest
	return t, (tc*pc + rest*ps) / t
}

// Norm returns FreqsMHz[fi] normalised by the highest frequency.
func (l *Library) Norm(fi int) float64 { return float64(l.FreqsMHz[fi]) / float64(l.MaxMHz()) }

// Observe is one profiling measurement on n GPUs at frequency index fi:
// the true step time and GPU energy per iteration (all n GPUs), each
// multiplied by 1+sigma*N(0,1) drawn from r (measurement noise).
func (p *Profile) Observe(n, fi int, sigma float64, r *rand.Rand) (iterSec, iterJ float64) {
	t, w := p.Truth(n, fi)
	e := t * w * float64(n)
	if sigma > 0 {
		t *= math.Max(0.5, 1+sigma*r.NormFloat64())
		e *= math.Max(0.5, 1+sigma*r.NormFloat64())
	}
	return t, e
}

// Config is the perf.Config of n GPUs at frequency index fi.
func (p *Profile) Config(n, fi int) Config {
	return Config{GPUs: n, PerNode: min(n, GPUsPerNode), LocalBatch: float64(p.Batch) / float64(n), Freq: p.lib.Norm(fi)}
}
