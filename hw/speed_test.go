package hw

import (
	"math"
	"strings"
	"testing"
)

// TestSpeedFigures: the embedded catalog's speeds, relative to the H100
// SXM5 (1), as their sources give them; models without a citable figure
// stay unknown.
func TestSpeedFigures(t *testing.T) {
	c := Default()
	cases := []struct {
		model, class string
		want         float64 // 0: unknown
	}{
		{"H100", Training, 1},
		{"H100", Inference, 1},
		{"NVIDIA-H100-80GB-HBM3", Training, 1}, // an alias
		// MLPerf Training v3.0 ResNet-50: 7.8 min (H100) / 14.4 min (A100) = 0.54.
		{"A100", Training, 0.54},
		{"A100", Inference, 0},
		// CUDO BERT-base: training 5x / 12x = 0.42, inference 4x / 7x = 0.57.
		{"L40S", Training, 0.42},
		{"L40S", Inference, 0.57},
		{"V100M16", Training, 0},
		{"T4", Inference, 0},
		{"B200", Training, 0},
	}
	for _, tc := range cases {
		t.Run(tc.model+"/"+tc.class, func(t *testing.T) {
			g, err := c.GPU(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			f := g.Speed.For(tc.class)
			switch {
			case tc.want == 0 && f != nil:
				t.Errorf("speed %v, want unknown (no citable figure)", *f.Relative)
			case tc.want != 0 && (f == nil || *f.Relative != tc.want || f.Source == ""):
				t.Errorf("speed %+v, want %v with a source", f, tc.want)
			}
		})
	}
}

// TestSpeedRatio: how much longer a job measured on ref runs on placed.
func TestSpeedRatio(t *testing.T) {
	c := Default()
	cases := []struct {
		ref, placed, class string
		want               float64
		err                string
	}{
		{"H100", "L40S", Training, 1 / 0.42, ""},    // 2.38: the L40S is slower
		{"L40S", "H100", Training, 0.42, ""},        // measured on the slower GPU
		{"H100", "L40S", Inference, 1 / 0.57, ""},   // 1.75
		{"A100", "L40S", Training, 0.54 / 0.42, ""}, // 1.29
		{"H100", "A100", Inference, 0, "GPU model A100 has no inference speed"},
		{"H900", "H100", Training, 0, "unknown GPU model \"H900\""},
		{"H100", "T4", Training, 0, "GPU model T4 has no training speed"},
	}
	for _, tc := range cases {
		t.Run(tc.ref+"->"+tc.placed+"/"+tc.class, func(t *testing.T) {
			got, err := c.SpeedRatio(tc.ref, tc.placed, tc.class)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("= %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestSpeedErrors: a bad figure names the entry, the class and the field.
func TestSpeedErrors(t *testing.T) {
	const head = "gpus:\n  - {name: X, idle_w: 1, tdp_w: 10, memory_gib: 1, source: s, speed: "
	cases := []struct{ name, speed, want string }{
		{"missing value", "{training: {source: b}}", "gpus[0] (X).speed.training.relative: missing"},
		{"zero", "{training: {relative: 0, source: b}}", "gpus[0] (X).speed.training.relative: 0, want a finite number in [0.001, 1000]"},
		{"negative", "{inference: {relative: -1, source: b}}", "gpus[0] (X).speed.inference.relative: -1, want"},
		{"NaN", "{training: {relative: .nan, source: b}}", "gpus[0] (X).speed.training.relative: NaN"},
		{"infinite", "{training: {relative: .inf, source: b}}", "gpus[0] (X).speed.training.relative: +Inf"},
		{"too small", "{training: {relative: 1e-300, source: b}}", "gpus[0] (X).speed.training.relative: 1e-300"},
		{"too large", "{training: {relative: 1001, source: b}}", "gpus[0] (X).speed.training.relative: 1001"},
		{"no source", "{training: {relative: 0.5}}", "gpus[0] (X).speed.training.source: empty"},
		{"blank source", "{training: {relative: 0.5, source: ' '}}", "gpus[0] (X).speed.training.source: empty"},
		{"unknown class", "{serving: {relative: 0.5, source: b}}", "field serving not found"},
		{"not a number", "{training: {relative: fast, source: b}}", "cannot unmarshal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(head + tc.speed + "}\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
