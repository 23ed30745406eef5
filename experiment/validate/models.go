package validate

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// catalogGPU maps a source's GPU name to the catalog entry that describes
// it ("": the catalog has none, so no catalog-based model covers it).
var catalogGPU = map[string]string{
	// Zeus' V100: the README does not give the memory size; both catalog
	// V100 entries carry the same idle and TDP figures.
	"V100": "V100M32",
	"P100": "P100",
	// Perseus' A100 SXM 80 GB profiles; the catalog's A100 is pwr-fgd's
	// G3 GPU (400 W, the SXM part).
	"A100-SXM": "A100",
	// TACC Longhorn's V100 SXM2 16 GB.
	"V100-Longhorn": "V100M16",
	"A40":           "",
	"RTX6000":       "",
}

// Model is a power model checked by the study.
type Model struct {
	Name, Equation string
	// Sample says how the check stands to the data the model is fitted
	// on: not fitted, in sample, or held out (and how).
	Sample string
	// score predicts the measured points the model covers; uncovered
	// names, per GPU, what it does not cover and why ("GPU: why").
	score func(cat *hw.Catalog, pts []Point) (out []scored, uncovered []string, err error)
}

// Model names.
const (
	PWR       = "pwr"
	DVFS      = "powerflow-dvfs"
	Variation = "vahrm-variation"
)

// Models are the power models the study checks, in report order.
func Models() []Model {
	return []Model{{
		Name:     PWR,
		Equation: "pwr-fgd eq. 2: a GPU with any allocation draws its catalog TDP (package power, policy/pwr)",
		Sample:   "not fitted: the catalog's TDP (pwr-fgd Table II); every point is out of sample",
		score:    pwrScore,
	}, {
		Name: DVFS,
		Equation: "PowerFlow eqs. 12-15 at one batch size (power.Piecewise): a GPU's power while it computes is " +
			"linear in u = f/f_max below a breakpoint u0 and cubic at and above it",
		Sample: fmt.Sprintf("held out by frequency: per Perseus stage and pass, fitted (least squares in watts; u0 the training "+
			"frequency with the lowest residual) on %d evenly spaced frequencies including the highest, as reproduce powerflow "+
			"profiles a job, and scored on the other frequencies only; the A40 profiles are used nowhere else in wattsched, "+
			"the A100 profiles also build the PowerFlow library's frequency response (perf/data)", profileFreqs),
		score: dvfsScore,
	}, {
		Name: Variation,
		Equation: "VAHRM per-device variation as experiment/vahrm builds it (Truth): a GPU not measured draws its mean " +
			"power per application from a normal distribution with the measured devices' mean and deviation",
		Sample: fmt.Sprintf("held out by device: each application's devices are split in two by a hash of their uuid; the "+
			"normal is fitted on one half and each device of the other half (its mean over its runs) is compared with the "+
			"normal's quantile at the device's rank, (i+0.5)/n: the error is in the distribution's level, spread and tails, "+
			"not a per-device prediction; at least %d devices per half", minDevices),
		score: variationScore,
	}, {
		Name: Busy,
		Equation: "the measured alternative to pwr (scenario power_model: measured-busy): a GPU with any allocation draws " +
			"its model's measured busy power (catalog busy_w), the mean over public workloads at the default power limit or " +
			"frequency, capped at the TDP",
		Sample: "held out by workload: each workload's points at the default setting are predicted by the mean of the " +
			"other workloads of the same GPU group (V100: Zeus and Longhorn; P100: Zeus; A100: Perseus)",
		score: busyScore,
	}, {
		Name: BusyPooled,
		Equation: "the measured alternative for a GPU model without measurements: idle + s x (TDP - idle), s the " +
			"measured busy share (busy - idle)/(TDP - idle) pooled over the measured GPU groups",
		Sample: "held out by GPU group: each group's default-setting points are predicted with s pooled over the other groups",
		score:  busyPooledScore,
	}}
}

// pwrScore predicts every point of a GPU the catalog describes with the
// catalog TDP.
func pwrScore(cat *hw.Catalog, pts []Point) ([]scored, []string, error) {
	var out []scored
	var unc []string
	for _, p := range pts {
		name, known := catalogGPU[p.GPU]
		if !known {
			return nil, nil, fmt.Errorf("%s line %d field gpu: GPU model %q has no catalog mapping", p.File, p.Line, p.GPU)
		}
		if name == "" {
			unc = append(unc, p.GPU+": the catalog has no entry for "+p.GPU)
			continue
		}
		g, err := cat.GPU(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line %d field gpu: %s (mapped to catalog GPU %s): %w", p.File, p.Line, p.GPU, name, err)
		}
		out = append(out, scored{p, PWR, float64(g.TDPW)})
	}
	return out, unc, nil
}

// profileFreqs is how many frequencies of a curve the DVFS fit sees: the
// number reproduce powerflow profiles a job at (its Setup.ProfileFreqs).
const profileFreqs = 8

// profiled are the indices of k evenly spaced frequencies out of n
// ascending ones, the highest included (reproduce powerflow's rule).
func profiled(n, k int) []int {
	var out []int
	for i := range k {
		out = append(out, n-1-i*(n-1)/(k-1))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dvfsScore fits the DVFS power form per measured curve (file, stage and
// pass) on its profiled frequencies and predicts the others.
func dvfsScore(_ *hw.Catalog, pts []Point) ([]scored, []string, error) {
	type key struct{ file, series string }
	groups := map[key][]Point{}
	for _, p := range pts {
		if p.Series != "" && p.Knob == "frequency MHz" {
			k := key{p.File, p.Series}
			groups[k] = append(groups[k], p)
		}
	}
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.series, b.series))
	})
	var out []scored
	var unc []string
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(a, b Point) int {
			return cmp.Or(cmp.Compare(a.KnobValue, b.KnobValue), cmp.Compare(a.Line, b.Line))
		})
		for i := 1; i < len(g); i++ {
			if g[i].KnobValue == g[i-1].KnobValue {
				return nil, nil, fmt.Errorf("%s line %d field frequency: %v MHz measured twice for %s (also line %d)",
					g[i].File, g[i].Line, g[i].KnobValue, k.series, g[i-1].Line)
			}
		}
		if len(g) < profileFreqs+2 {
			unc = append(unc, fmt.Sprintf("%s: %s %s has %d frequencies, fewer than %d (%d to fit, 2 to score)",
				g[0].GPU, k.file, k.series, len(g), profileFreqs+2, profileFreqs))
			continue
		}
		fmax := g[len(g)-1].KnobValue
		train := profiled(len(g), profileFreqs)
		u, w := make([]float64, len(train)), make([]float64, len(train))
		for i, j := range train {
			u[i], w[i] = g[j].KnobValue/fmax, g[j].Watts
		}
		u0, pw, err := fitDVFS(u, w)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", k.file, k.series, err)
		}
		for i, p := range g {
			if !slices.Contains(train, i) {
				out = append(out, scored{p, DVFS, pw.At(p.KnobValue/fmax, u0)})
			}
		}
	}
	return out, unc, nil
}

// fitDVFS fits power w against normalised frequency u (ascending) with
// the DVFS form: a line below the breakpoint u0 and a cubic at and above
// it, each by least squares. u0 is one of the u values with no sample or
// at least two below it and at least four at or above it; the one with the
// lowest total squared residual wins, the lower u0 on a tie.
func fitDVFS(u, w []float64) (float64, power.Piecewise, error) {
	var best power.Piecewise
	bestU0, bestSSE := 0.0, math.Inf(1)
	for j := range u {
		if j == 1 || len(u)-j < 4 {
			continue
		}
		var p power.Piecewise
		var sse float64
		if j > 0 {
			c, s, err := lsq(u[:j], w[:j], 1)
			if err != nil {
				return 0, p, err
			}
			p.Low = [2]float64{c[0], c[1]}
			sse += s
		}
		c, s, err := lsq(u[j:], w[j:], 3)
		if err != nil {
			return 0, p, err
		}
		p.High = [4]float64{c[0], c[1], c[2], c[3]}
		if sse += s; sse < bestSSE {
			best, bestU0, bestSSE = p, u[j], sse
		}
	}
	if math.IsInf(bestSSE, 1) {
		return 0, best, fmt.Errorf("fit dvfs: %d frequencies: need at least 4", len(u))
	}
	return bestU0, best, nil
}

// lsq fits a polynomial of degree deg in x to y by least squares (gonum's
// QR solve); the coefficients run from the highest power down to the
// constant, and sse is the sum of squared residuals.
func lsq(x, y []float64, deg int) (coef []float64, sse float64, err error) {
	a := mat.NewDense(len(x), deg+1, nil)
	for i, xv := range x {
		for d := 0; d <= deg; d++ {
			a.Set(i, d, math.Pow(xv, float64(deg-d)))
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var sol mat.VecDense
	if err := qr.SolveVecTo(&sol, false, mat.NewVecDense(len(y), slices.Clone(y))); err != nil {
		return nil, 0, fmt.Errorf("fit dvfs: %w", err)
	}
	coef = make([]float64, deg+1)
	for d := range coef {
		coef[d] = sol.AtVec(d)
	}
	for i, xv := range x {
		var f float64
		for _, c := range coef {
			f = f*xv + c
		}
		sse += (f - y[i]) * (f - y[i])
	}
	return coef, sse, nil
}

// minDevices is the fewest devices per half the variation check scores.
const minDevices = 10

// half says which half a device falls in: a hash of its identifier, so
// the split depends on what a device is, never on where its rows stand.
func half(device string) int {
	h := fnv.New64a()
	h.Write([]byte("wattsched validate variation\x00" + device))
	return int(h.Sum64() & 1)
}

// variationScore compares, per GPU model and application, the held-out
// devices' mean power with the quantiles of the normal fitted on the
// other devices.
func variationScore(_ *hw.Catalog, pts []Point) ([]scored, []string, error) {
	type key struct{ gpu, workload string }
	type dev struct {
		id    string
		first Point
		ws    []float64
		mean  float64
	}
	groups := map[key]map[string]*dev{}
	for _, p := range pts {
		if p.Device == "" {
			continue
		}
		k := key{p.GPU, p.Workload}
		if groups[k] == nil {
			groups[k] = map[string]*dev{}
		}
		d := groups[k][p.Device]
		if d == nil {
			d = &dev{id: p.Device, first: p}
			groups[k][p.Device] = d
		}
		if p.Line < d.first.Line {
			d.first = p
		}
		d.ws = append(d.ws, p.Watts)
	}
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.gpu, b.gpu), cmp.Compare(a.workload, b.workload))
	})
	var out []scored
	var unc []string
	for _, k := range keys {
		var halves [2][]*dev
		for _, id := range slices.Sorted(maps.Keys(groups[k])) {
			d := groups[k][id]
			slices.Sort(d.ws)
			var s float64
			for _, w := range d.ws {
				s += w
			}
			d.mean = s / float64(len(d.ws))
			halves[half(id)] = append(halves[half(id)], d)
		}
		fitHalf, test := halves[0], halves[1]
		if len(fitHalf) < minDevices || len(test) < minDevices {
			unc = append(unc, fmt.Sprintf("%s: %s has %d and %d devices in its two halves, fewer than %d", k.gpu, k.workload, len(fitHalf), len(test), minDevices))
			continue
		}
		xs := make([]float64, len(fitHalf))
		for i, d := range fitHalf {
			xs[i] = d.mean
		}
		slices.Sort(xs)
		m, sd := experiment.MeanStd(xs)
		slices.SortFunc(test, func(a, b *dev) int { return cmp.Or(cmp.Compare(a.mean, b.mean), cmp.Compare(a.id, b.id)) })
		n := float64(len(test))
		for i, d := range test {
			q := (float64(i) + 0.5) / n
			p := d.first
			p.Setting = "device " + d.id + ", mean of " + strconv.Itoa(len(d.ws)) + " runs"
			p.Knob, p.KnobValue, p.Watts = "", 0, d.mean
			out = append(out, scored{p, Variation, m + sd*math.Sqrt2*math.Erfinv(2*q-1)})
		}
	}
	return out, unc, nil
}

// Untested are the parts of the models no public measurement found here
// can check: listed in every result, never dropped silently.
var Untested = []string{
	"pwr at partial allocation (a GPU shared by fractional tasks, pwr-fgd's GPU sharing): no public per-GPU power measured under fractional allocation was found",
	"power under MIG partitions: no public measurement found",
	"power under time-sliced sharing (co-located jobs, EaCO): no public measurement found",
	"idle power (pwr-fgd eq. 2's idle term) and the catalog's idle figures: the shared measurements hold no idle readings (Longhorn's min_pwr is the lowest reading during a training run, with a CUDA context and work, 60 W and more, not idle); the catalog's measured idle figures (Vadari, a public MI300X benchmark repository) are the catalog's own values, so comparing the model with them would be a check that cannot fail",
	"CPU power (pwr-fgd eq. 1) and VAHRM's CPU variation (6% coefficient of variation, our choice): no public per-socket measurement in the shared traces",
	"catalog curves (hw curve): the embedded catalog has none, and at full allocation a curve gives TDP, the pwr prediction",
	"PowerFlow's DVFS equations in batch size and synchronisation (eq. 12's batch term, eq. 14's P_sync): Perseus' stage profiles are compute passes at one micro-batch size; and the DVFS parameters reproduce powerflow fits per Table 1 DNN: they are fitted on the library's profiles (Perseus A100 frequency response, Zeus V100 power vs batch size), and those DNNs have no public power-vs-frequency measurement; their held-out energy error is reproduce powerflow's Table 2",
	"TSMVA's forests: their held-out error on the same Longhorn runs is reported by reproduce vahrm (Fig. 5 / Table VI), not repeated here",
	"CE-DLA's per-type fits: its node types' power comes from the paper's own table (experiment/cedla/data); no public measurement of those node types under its workloads is in the shared traces",
}

// The measured alternative to pwr's full-TDP reading (docs/power-models.md).
const (
	Busy       = "measured-busy"
	BusyPooled = "measured-busy-pooled"
)

// busyGroup maps a source's GPU to the group of catalog GPUs its busy
// power describes. Both catalog V100 entries carry the same idle and TDP
// figures and Zeus does not give its V100's memory, so the Zeus and
// Longhorn V100 workloads form one group.
var busyGroup = map[string]string{"V100": "V100", "V100-Longhorn": "V100", "P100": "P100", "A100-SXM": "A100"}

// busyCatalog are the catalog GPUs of each group.
var busyCatalog = map[string][]string{"V100": {"V100M16", "V100M32"}, "P100": {"P100"}, "A100": {"A100"}}

// BusyFigure is the measured busy power of one group of catalog GPUs.
type BusyFigure struct {
	Group   string
	Catalog []string
	// Workloads and Points are what the figure averages: each
	// workload's mean at the default setting, workloads weighted equally.
	Workloads, Points int
	// MeasuredW is that mean; BusyW is it capped at the catalog TDP
	// (Capped says it was).
	MeasuredW, BusyW float64
	Capped           bool
	IdleW, TDPW      float64
	// Share is (BusyW - idle) / (TDP - idle).
	Share float64
}

// BusyFit is the measured busy power per group and the pooled share that
// stands in for a GPU model without measurements: busy = idle + share x
// (TDP - idle).
type BusyFit struct {
	Groups []BusyFigure
	Share  float64
}

// defaultPoints are the points at each file's default setting: the
// highest power limit or frequency in the file; points with no setting
// all count.
func defaultPoints(pts []Point) []Point {
	top := map[string]float64{}
	for _, p := range pts {
		if p.Knob != "" {
			top[p.File] = max(top[p.File], p.KnobValue)
		}
	}
	var out []Point
	for _, p := range pts {
		if p.Knob == "" || p.KnobValue == top[p.File] {
			out = append(out, p)
		}
	}
	return out
}

// meanOf is the mean of xs summed in ascending order (independent of the
// order the values came in).
func meanOf(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// busyWorkloads groups the default-setting points by busy group and
// workload (source GPU and workload, so the same workload name measured
// on two data sets stays two workloads).
func busyWorkloads(pts []Point) map[string]map[string][]Point {
	out := map[string]map[string][]Point{}
	for _, p := range defaultPoints(pts) {
		g, ok := busyGroup[p.GPU]
		if !ok {
			continue
		}
		if out[g] == nil {
			out[g] = map[string][]Point{}
		}
		w := p.GPU + " " + p.Workload
		out[g][w] = append(out[g][w], p)
	}
	return out
}

func workloadMean(ps []Point) float64 {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Watts
	}
	return meanOf(xs)
}

// FitBusy fits the measured busy power on all the points (no hold-out:
// the figures a scenario's power_model: measured-busy uses).
func FitBusy(cat *hw.Catalog, pts []Point) (*BusyFit, error) {
	ws := busyWorkloads(pts)
	fit := &BusyFit{}
	var shares []float64
	for _, g := range slices.Sorted(maps.Keys(ws)) {
		idle, tdp, err := groupWatts(cat, g)
		if err != nil {
			return nil, err
		}
		f := BusyFigure{Group: g, Catalog: busyCatalog[g], Workloads: len(ws[g]), IdleW: idle, TDPW: tdp}
		var means []float64
		for _, ps := range ws[g] {
			means = append(means, workloadMean(ps))
			f.Points += len(ps)
		}
		f.MeasuredW = meanOf(means)
		f.BusyW, f.Capped = min(f.MeasuredW, tdp), f.MeasuredW > tdp
		f.Share = (f.BusyW - idle) / (tdp - idle)
		shares = append(shares, f.Share)
		fit.Groups = append(fit.Groups, f)
	}
	if len(shares) > 0 {
		fit.Share = meanOf(shares)
	}
	return fit, nil
}

// groupWatts are the idle and TDP of a group's catalog GPUs (the same for
// each, else an error).
func groupWatts(cat *hw.Catalog, group string) (idle, tdp float64, err error) {
	for i, name := range busyCatalog[group] {
		m, err := cat.GPU(name)
		if err != nil {
			return 0, 0, fmt.Errorf("busy group %s: %w", group, err)
		}
		if i > 0 && (float64(m.IdleW) != idle || float64(m.TDPW) != tdp) {
			return 0, 0, fmt.Errorf("busy group %s: catalog %s has idle %v W, TDP %v W, unlike %s's", group, name, m.IdleW, m.TDPW, busyCatalog[group][0])
		}
		idle, tdp = float64(m.IdleW), float64(m.TDPW)
	}
	return idle, tdp, nil
}

// busyScore scores the measured busy power held out by workload: each
// workload's default-setting points are predicted by the mean of the
// other workloads of its group (capped at TDP).
func busyScore(cat *hw.Catalog, pts []Point) ([]scored, []string, error) {
	ws := busyWorkloads(pts)
	var out []scored
	var unc []string
	for _, g := range slices.Sorted(maps.Keys(ws)) {
		_, tdp, err := groupWatts(cat, g)
		if err != nil {
			return nil, nil, err
		}
		names := slices.Sorted(maps.Keys(ws[g]))
		if len(names) < 2 {
			unc = append(unc, g+": one workload, none to hold out")
			continue
		}
		means := map[string]float64{}
		for _, w := range names {
			means[w] = workloadMean(ws[g][w])
		}
		for _, w := range names {
			var others []float64
			for _, o := range names {
				if o != w {
					others = append(others, means[o])
				}
			}
			pred := min(meanOf(others), tdp)
			for _, p := range ws[g][w] {
				out = append(out, scored{p, Busy, pred})
			}
		}
	}
	return out, unc, nil
}

// busyPooledScore scores the pooled share held out by GPU group: each
// group's default-setting points are predicted by idle + share x (TDP -
// idle) with the share pooled over the other groups.
func busyPooledScore(cat *hw.Catalog, pts []Point) ([]scored, []string, error) {
	fit, err := FitBusy(cat, pts)
	if err != nil {
		return nil, nil, err
	}
	if len(fit.Groups) < 2 {
		return nil, []string{"all: fewer than two GPU groups measured, none to hold out"}, nil
	}
	ws := busyWorkloads(pts)
	var out []scored
	for _, f := range fit.Groups {
		var others []float64
		for _, o := range fit.Groups {
			if o.Group != f.Group {
				others = append(others, o.Share)
			}
		}
		pred := f.IdleW + meanOf(others)*(f.TDPW-f.IdleW)
		for _, w := range slices.Sorted(maps.Keys(ws[f.Group])) {
			for _, p := range ws[f.Group][w] {
				out = append(out, scored{p, BusyPooled, pred})
			}
		}
	}
	return out, nil, nil
}
