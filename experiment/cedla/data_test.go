package cedla

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/trace"
)

func TestEmbeddedTable(t *testing.T) {
	tb, err := EmbeddedTable()
	if err != nil {
		t.Fatal(err)
	}
	d := Derive(tb)
	// RTX2060, ResNet152: 15 s x 3 x 11.3 / (11.3 + 19.6 + 5) per 10
	// iterations; an epoch is 1,281,167 / 32 iterations.
	share := 3 * 11.3 / 35.9
	if got, want := d.EpochSeconds[0][2], 15*share/10*1281167/32; math.Abs(got-want) > 1e-6 {
		t.Errorf("epoch seconds ResNet152 on RTX2060 = %v, want %v", got, want)
	}
	// GTX1060-3GB, VGG19: mu = 1 / (0.062 x 3 x 19.6 / 35.9).
	if got, want := d.Mu[1][0], 1/(0.062*3*19.6/35.9); math.Abs(got-want) > 1e-9 {
		t.Errorf("mu VGG19 on GTX1060-3GB = %v, want %v", got, want)
	}
	// True training draw: 40 W node + 35 W CPU + 0.85 x 160 W (ResNet152, RTX2060).
	if got := float64(d.TrainW[0][2]); math.Abs(got-(40+35+0.85*160)) > 1e-9 {
		t.Errorf("train W = %v", got)
	}
	if len(d.StandIns) != 4 {
		t.Errorf("stand-ins %q, want 4 (GTX1080 time, two latencies, per-model split)", d.StandIns)
	}
}

// TestFitRecoversPower: the RLS fits' held-out MAPE is small (the true
// training draw is not exactly linear in F, and samples carry 3% noise).
func TestFitRecoversPower(t *testing.T) {
	tb, _ := EmbeddedTable()
	f, err := Fit(Derive(tb), 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range DNNs {
		if f.TrainMAPE[i] > 6 || f.InferMAPE[i] > 12 || f.TrainMAPE[i] < 1 {
			t.Errorf("%s: MAPE training %.2f%%, inference %.2f%%", m, f.TrainMAPE[i], f.InferMAPE[i])
		}
	}
}

func TestReadTableErrors(t *testing.T) {
	head := "quantity,model,gpu,value,unit,source\n"
	good := string(modelsCSV[len(head):])
	for _, c := range []struct {
		name, text string
		line       int
		col        string
	}{
		{"empty", "", 1, ""},
		{"bad header", "a,b\n", 1, ""},
		{"unknown quantity", head + "speed,*,*,1,s,x\n", 2, "quantity"},
		{"model where none", head + "tdp,VGG19,RTX2060,1,W,x\n", 2, "model"},
		{"unknown gpu", head + "tdp,*,A100,1,W,x\n", 2, "gpu"},
		{"negative", head + "tdp,*,RTX2060,-1,W,x\n", 2, "value"},
		{"share above 1", head + "train_share,VGG19,*,1.5,f,x\n", 2, "value"},
		{"no source", head + "tdp,*,RTX2060,160,W,\n", 2, "source"},
		{"short line", head + "tdp,*,RTX2060\n", 2, ""},
		{"duplicate", head + good + "tdp,*,RTX2060,160,W,x\n", 28, ""},
		{"missing rows", head + "tdp,*,RTX2060,160,W,x\n", 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTable(strings.NewReader(c.text), "m.csv")
			var pe *trace.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a ParseError", err)
			}
			if pe.File != "m.csv" || pe.Line != c.line || pe.Column != c.col {
				t.Errorf("error at %s:%d column %q, want line %d column %q (%v)", pe.File, pe.Line, pe.Column, c.line, c.col, err)
			}
		})
	}
}

func FuzzReadTable(f *testing.F) {
	f.Add(modelsCSV)
	f.Add([]byte("quantity,model,gpu,value,unit,source\ntdp,*,RTX2060,1e400,W,x\n"))
	f.Add([]byte("quantity,model,gpu,value,unit,source\n\"a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := ReadTable(strings.NewReader(string(b)), "f.csv")
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a located ParseError", err)
			}
			return
		}
		// A table that parses derives finite, positive rates.
		d := Derive(tb)
		for i := range DNNs {
			for g := range GPUs {
				if !(d.Mu[i][g] > 0) || math.IsInf(d.Mu[i][g], 0) || !(d.EpochSeconds[i][g] > 0) {
					t.Fatalf("derived mu %v, epoch %v", d.Mu[i][g], d.EpochSeconds[i][g])
				}
			}
		}
	})
}

func TestGridWeeks(t *testing.T) {
	p, c, err := Grid()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Values) != 192 || len(c.Values) != 192 || p.Filled != 0 || c.Filled != 0 {
		t.Errorf("price %d hours (%d filled), carbon %d (%d filled), want 192 each", len(p.Values), p.Filled, len(c.Values), c.Filled)
	}
	if p.Start.Format("2006-01-02 15") != "2024-03-14 04" || c.Start.Format("2006-01-02 15") != "2021-06-01 04" {
		t.Errorf("starts %v, %v", p.Start, c.Start)
	}
}
