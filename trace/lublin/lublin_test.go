package lublin

import (
	"math"
	"reflect"
	"testing"
)

// The generated log follows the model's distributions: the shares below
// are the parameters themselves, the tolerances about 4 standard errors
// at n = 20,000 (sqrt(0.25/20000) = 0.0035 for a share).
func TestGenerateFollowsTheModel(t *testing.T) {
	p := Default(128)
	const n = 20000
	l, err := Generate(p, n, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != n {
		t.Fatalf("%d jobs, want %d", len(l.Jobs), n)
	}
	serial, pow2, parallel := 0, 0, 0
	var logRunSmall, logRunLarge []float64
	for i, j := range l.Jobs {
		if i > 0 && j.Submit < l.Jobs[i-1].Submit {
			t.Fatalf("job %d submitted at %d before job %d at %d", i, j.Submit, i-1, l.Jobs[i-1].Submit)
		}
		if j.Run < 1 || float64(j.Run) > math.Exp(p.MaxLogRun)+1 {
			t.Fatalf("job %d runs %d s, want 1..e^12", i, j.Run)
		}
		if j.Procs() < 1 || j.Procs() > 128 {
			t.Fatalf("job %d has %d nodes, want 1..128", i, j.Procs())
		}
		if j.Procs() == 1 {
			serial++
		} else {
			parallel++
			if j.Procs()&(j.Procs()-1) == 0 {
				pow2++
			}
		}
		if j.Procs() <= 2 {
			logRunSmall = append(logRunSmall, math.Log(float64(j.Run)))
		} else if j.Procs() >= 32 {
			logRunLarge = append(logRunLarge, math.Log(float64(j.Run)))
		}
	}
	if got := float64(serial) / n; math.Abs(got-p.SerialProb) > 0.015 {
		t.Errorf("serial share %.3f, want %.3f +- 0.015", got, p.SerialProb)
	}
	// Power-of-two sizes: Pow2Prob of all jobs are rounded to one (the
	// model draws serial, power-of-two and other sizes from one uniform),
	// and some unrounded ones land on one, so among parallel jobs at least
	// 0.576 / (1 - 0.244) = 0.762.
	if got, min := float64(pow2)/float64(parallel), p.Pow2Prob/(1-p.SerialProb); got < min-0.015 || got > 0.95 {
		t.Errorf("power-of-two share of parallel jobs %.3f, want >= %.3f and below 0.95", got, min)
	}
	// Larger jobs run longer: p = PA*size + PB falls with size, so the
	// long second gamma (mean 312*0.03 = 9.36, e^9.36 ~ 3 h) is chosen more.
	if ms, ml := mean(logRunSmall), mean(logRunLarge); !(ml > ms+0.5) {
		t.Errorf("mean log run time: %.2f for <= 2 nodes, %.2f for >= 32 nodes; want the larger jobs longer by > 0.5", ms, ml)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Arrivals follow the daily cycle: the weights average 1 and peak in the
// early afternoon (the gamma's mode, (8.17-1) x 3.96 = 28.4 half-hours,
// is bucket 27, 13:30); the busiest half-hour gets clearly more arrivals
// than the quietest.
func TestDailyCycle(t *testing.T) {
	p := Default(128)
	w := p.BucketWeights()
	hi, lo, sum := 0, 0, 0.0
	for b := range w {
		sum += w[b]
		if w[b] > w[hi] {
			hi = b
		}
		if w[b] < w[lo] {
			lo = b
		}
	}
	if math.Abs(sum/Buckets-1) > 1e-9 || hi < 24 || hi > 32 || w[lo] >= 0.5 {
		t.Fatalf("weights mean %v (want 1), peak at bucket %d (want 24..32, 12:00-16:00), min %v (want < 0.5): %v", sum/Buckets, hi, w[lo], w)
	}
	l, err := Generate(p, 20000, 3)
	if err != nil {
		t.Fatal(err)
	}
	var count [Buckets]int
	for _, j := range l.Jobs {
		count[(j.Submit/1800)%Buckets]++
	}
	if !(count[hi] > 2*count[lo]) {
		t.Errorf("arrivals in the busiest-weight half-hour %d: %d, quietest %d: %d; want more than twice", hi, count[hi], lo, count[lo])
	}
}

func TestDeterministicAndSeeded(t *testing.T) {
	p := Default(540)
	a, _ := Generate(p, 500, 1)
	b, _ := Generate(p, 500, 1)
	c, _ := Generate(p, 500, 2)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed gave different logs")
	}
	if reflect.DeepEqual(a.Jobs, c.Jobs) {
		t.Error("different seeds gave the same log")
	}
	big := 0
	for _, j := range a.Jobs {
		big = max(big, int(j.Procs()))
	}
	if big > 540 {
		t.Errorf("largest job %d nodes on a 540-node machine", big)
	}
}

func TestBadParams(t *testing.T) {
	for name, mod := range map[string]func(*Params){
		"serial": func(p *Params) { p.SerialProb = 1.5 },
		"nodes":  func(p *Params) { p.Nodes = 0 },
		"order":  func(p *Params) { p.UMed = p.UHi + 1 },
		"gamma":  func(p *Params) { p.B2 = 0 },
		"nan":    func(p *Params) { p.PA = math.NaN() },
	} {
		p := Default(128)
		mod(&p)
		if _, err := Generate(p, 10, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Generate(Default(128), 0, 1); err == nil {
		t.Error("0 jobs: no error")
	}
}
