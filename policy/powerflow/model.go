package powerflow

import (
	"math"

	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Models are one DNN's fitted performance models: step time (eqs. 1-5)
// and GPU energy per iteration (eqs. 6-15).
type Models struct {
	Step   perf.StepParams
	Energy power.DVFSParams
}

// Predict returns step time and energy per iteration for c.
func (m *Models) Predict(c perf.Config) (iterSec, iterJ float64) {
	s := m.Step.Step(c)
	return s.Iter, m.Energy.IterJoules(c.GPUs, c.LocalBatch, c.Freq, s.Grad, s.Sync, s.Iter)
}

// Fitted predicts with the fitted models of each job's DNN, re-fitted
// online to the job's own profiling measurements: for each GPU count the
// job was profiled on, the least-squares (in log space) time and energy
// scale factors between its measurements and the models; a count not
// profiled yet takes the factors of the nearest profiled count.
type Fitted struct {
	models      map[string]*Models
	freqNorm    []float64
	gpusPerNode int
	calib       map[int]*calibration
	base        map[baseKey]*[8][]float64
}

type baseKey struct {
	dnn   string
	batch int
}

type calibration struct {
	obs    int
	t, e   [8]float64 // by log2 count
	have   [8]bool
	anyObs bool
}

// NewFitted builds a predictor from per-DNN models; freqsMHz are the
// supported frequencies (normalised by the highest).
func NewFitted(models map[string]*Models, freqsMHz []int, gpusPerNode int) *Fitted {
	f := &Fitted{models: models, gpusPerNode: gpusPerNode, calib: map[int]*calibration{}, base: map[baseKey]*[8][]float64{}}
	top := float64(freqsMHz[len(freqsMHz)-1])
	for _, m := range freqsMHz {
		f.freqNorm = append(f.freqNorm, float64(m)/top)
	}
	return f
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func (f *Fitted) config(j *policy.ElasticJob, n, fi int) perf.Config {
	return perf.Config{GPUs: n, PerNode: min(n, f.gpusPerNode), LocalBatch: float64(j.Batch) / float64(n), Freq: f.freqNorm[fi]}
}

func (f *Fitted) calibrate(v *policy.ElasticView, m *Models) *calibration {
	c := f.calib[v.Job.ID]
	if c != nil && c.obs == len(v.Obs) {
		return c
	}
	c = &calibration{obs: len(v.Obs)}
	var st, se [8]float64
	var cnt [8]int
	for _, o := range v.Obs {
		k := log2(o.GPUs)
		t, e := f.basePred(v.Job, m, o.GPUs, o.FreqIdx)
		st[k] += math.Log(o.IterSec / t)
		se[k] += math.Log(o.IterJ / e)
		cnt[k]++
	}
	for k := range cnt {
		if cnt[k] > 0 {
			c.t[k], c.e[k], c.have[k], c.anyObs = math.Exp(st[k]/float64(cnt[k])), math.Exp(se[k]/float64(cnt[k])), true, true
		}
	}
	f.calib[v.Job.ID] = c
	return c
}

// basePred is the models' prediction, which depends only on (DNN, batch,
// n, f): cached.
func (f *Fitted) basePred(j *policy.ElasticJob, m *Models, n, fi int) (float64, float64) {
	bk := baseKey{j.DNN, j.Batch}
	b := f.base[bk]
	if b == nil {
		b = new([8][]float64)
		f.base[bk] = b
	}
	k := log2(n)
	if b[k] == nil {
		b[k] = make([]float64, 2*len(f.freqNorm))
		for i := range f.freqNorm {
			b[k][2*i], b[k][2*i+1] = m.Predict(f.config(j, n, i))
		}
	}
	return b[k][2*fi], b[k][2*fi+1]
}

// Predict implements policy.ElasticPredictor.
func (f *Fitted) Predict(v *policy.ElasticView, n, fi int) (float64, float64, bool) {
	m := f.models[v.Job.DNN]
	if m == nil || n < 1 || n > v.Job.MaxGPUs {
		return 0, 0, false
	}
	t, e := f.basePred(v.Job, m, n, fi)
	c := f.calibrate(v, m)
	if c.anyObs {
		k := log2(n)
		best := -1
		for d := 0; d < 8 && best < 0; d++ {
			for _, kk := range []int{k - d, k + d} {
				if best < 0 && kk >= 0 && kk < 8 && c.have[kk] {
					best = kk
				}
			}
		}
		t, e = t*c.t[best], e*c.e[best]
	}
	return t, e, true
}
