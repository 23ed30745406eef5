package perf

import (
	"math"
	"testing"
)

func loadLib(t *testing.T) *Library {
	t.Helper()
	l, err := Load(50, 400)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestFrequencyGrid(t *testing.T) {
	l := loadLib(t)
	// Perseus A100 stage profiles: 855..1410 MHz in 15 MHz steps = 38 points.
	if len(l.FreqsMHz) != 38 || l.FreqsMHz[0] != 855 || l.MaxMHz() != 1410 {
		t.Fatalf("grid %v", l.FreqsMHz)
	}
	top := len(l.FreqsMHz) - 1
	if l.TimeRatio[top] != 1 || l.PowerRatio[top] != 1 {
		t.Fatalf("ratios at the top frequency %v %v, want 1", l.TimeRatio[top], l.PowerRatio[top])
	}
	// At 855 MHz compute takes longer, but less than 1410/855 = 1.649x
	// (not all of it is core-bound), at about half the power.
	if r := l.TimeRatio[0]; r < 1.4 || r > 1410.0/855 {
		t.Errorf("time ratio at 855 MHz %v", r)
	}
	if r := l.PowerRatio[0]; r < 0.4 || r > 0.6 {
		t.Errorf("power ratio at 855 MHz %v", r)
	}
}

func TestTruthFromMeasurements(t *testing.T) {
	l := loadLib(t)
	p := l.Profile("ResNet18", 64)
	top := len(l.FreqsMHz) - 1
	// ef_a100_resnet50.csv, batch 64: 6.8429775823889685 it/s on 1 GPU,
	// 11.838468717843664 on 2. zeus_power_v100.csv: resnet50 batch 64 at
	// the 250 W limit draws 222.8975265151672 W -> 400 W * 222.90/250.
	w1 := 400 * 222.8975265151672 / 250
	if s, w := p.Truth(1, top); !near(s, 1/6.8429775823889685) || !near(w, w1) {
		t.Errorf("1 GPU: %v s, %v W; want %v s, %v W", s, w, 1/6.8429775823889685, w1)
	}
	// Two GPUs at the top frequency: the measured step time exactly.
	if s, _ := p.Truth(2, top); !near(s, 1/11.838468717843664) {
		t.Errorf("2 GPUs: %v s", s)
	}
	// One GPU at 855 MHz: all of the step scales with Perseus' time ratio,
	// the power with its power ratio.
	s, w := p.Truth(1, 0)
	if !near(s, l.TimeRatio[0]/6.8429775823889685) || !near(w, w1*l.PowerRatio[0]) {
		t.Errorf("855 MHz: %v s %v W", s, w)
	}
	if p.MaxGPUs() != 64 {
		t.Errorf("max GPUs %d, want 64", p.MaxGPUs())
	}
	// deepspeech2 batch 32 has no 64-GPU measurement (empty field).
	if m := l.Profile("DeepSpeech2", 32).MaxGPUs(); m != 32 {
		t.Errorf("DeepSpeech2/32 max GPUs %d, want 32", m)
	}
}

func TestStepModelLimits(t *testing.T) {
	p := StepParams{AlphaIO: 0.01, BetaIO: 0.001, AlphaGrad: 0.02, BetaGrad: 0.001, KappaGrad: 0.002,
		Local: SyncParams{Alpha: 0.01, Kappa: 0.001, Beta: 0.001, Theta: 0.002}, Gamma1: 1, Gamma2: 1}
	c := Config{GPUs: 4, PerNode: 4, LocalBatch: 16, Freq: 0.5}
	s := p.Step(c)
	// gamma = 1: the sum. IO = 0.01 + 0.001*16*4 = 0.074; grad = 0.02 +
	// (0.001 + 0.002/0.5)*16 = 0.1; sync = 0.01/0.5 + (0.001/0.5 + 0.001)*2 + 0.002 = 0.028.
	if !near(s.IO, 0.074) || !near(s.Grad, 0.1) || !near(s.Sync, 0.028) || !near(s.Iter, 0.202) {
		t.Fatalf("parts %+v", s)
	}
	p.Gamma1, p.Gamma2 = 60, 60
	if s := p.Step(c); math.Abs(s.Iter-0.1) > 0.002 {
		t.Fatalf("large gamma should approach the max 0.1, got %v", s.Iter)
	}
}
