package fit

import (
	"fmt"
	"slices"
)

// Sample is one measurement: a device ran an application with the given
// features and drew Power watts.
type Sample struct {
	Device   string
	App      string
	Features []float64
	Power    float64
}

// Learner fits a regressor.
type Learner func(d Dataset) (Regressor, error)

// LinearLearner fits least squares.
func LinearLearner(d Dataset) (Regressor, error) { return FitLinear(d) }

// ForestLearner fits random forests with p.
func ForestLearner(p ForestParams) Learner {
	return func(d Dataset) (Regressor, error) { return FitForest(d, p) }
}

// PerDevice is the single-stage baseline of the paper (like
// Variability-Trained Prediction): one model per device fitted on that
// device's samples only.
type PerDevice struct{ Models map[string]Regressor }

// Predict returns the device's prediction; unknown devices are an error.
func (p *PerDevice) Predict(device string, x []float64) (float64, error) {
	m, ok := p.Models[device]
	if !ok {
		return 0, fmt.Errorf("fit: no model for device %q", device)
	}
	return m.Predict(x), nil
}

// FitPerDevice fits one model per device.
func FitPerDevice(samples []Sample, l Learner) (*PerDevice, error) {
	out := &PerDevice{Models: map[string]Regressor{}}
	for _, dev := range devices(samples) {
		m, err := l(dataset(samples, dev, nil))
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", dev, err)
		}
		out.Models[dev] = m
	}
	return out, nil
}

// TwoStage is TSMVA: Stage1 predicts the application's baseline (its power
// averaged over all devices) from its features; Stage2[device] predicts the
// device's deviation from Stage1; the prediction is their sum (eq. 4).
type TwoStage struct {
	Stage1 Regressor
	Stage2 map[string]Regressor
}

// Predict returns the device's prediction; a device without a stage-2 model
// gets the stage-1 baseline.
func (t *TwoStage) Predict(device string, x []float64) float64 {
	y := t.Stage1.Predict(x)
	if m, ok := t.Stage2[device]; ok {
		y += m.Predict(x)
	}
	return y
}

// FitTwoStage trains stage 1 on every sample with the per-application
// mean power over devices as target (eq. 3; the intermediate goal), then one
// stage-2 model per device on that device's residuals.
func FitTwoStage(samples []Sample, stage1, stage2 Learner) (*TwoStage, error) {
	// Baseline B_j: mean power of application j over all its samples.
	sum, cnt := map[string]float64{}, map[string]int{}
	for _, s := range samples {
		sum[s.App] += s.Power
		cnt[s.App]++
	}
	d := Dataset{}
	for _, s := range samples {
		d.X = append(d.X, s.Features)
		d.Y = append(d.Y, sum[s.App]/float64(cnt[s.App]))
	}
	s1, err := stage1(d)
	if err != nil {
		return nil, fmt.Errorf("stage 1: %w", err)
	}
	t := &TwoStage{Stage1: s1, Stage2: map[string]Regressor{}}
	for _, dev := range devices(samples) {
		r := dataset(samples, dev, func(s Sample) float64 { return s.Power - s1.Predict(s.Features) })
		m, err := stage2(r)
		if err != nil {
			return nil, fmt.Errorf("stage 2 device %s: %w", dev, err)
		}
		t.Stage2[dev] = m
	}
	return t, nil
}

func devices(samples []Sample) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range samples {
		if !seen[s.Device] {
			seen[s.Device] = true
			out = append(out, s.Device)
		}
	}
	slices.Sort(out)
	return out
}

func dataset(samples []Sample, dev string, target func(Sample) float64) Dataset {
	d := Dataset{}
	for _, s := range samples {
		if s.Device != dev {
			continue
		}
		d.X = append(d.X, s.Features)
		if target != nil {
			d.Y = append(d.Y, target(s))
		} else {
			d.Y = append(d.Y, s.Power)
		}
	}
	return d
}
