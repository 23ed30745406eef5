package bloxpal

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/trace"
)

func TestEmbedded(t *testing.T) {
	d, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	// data/README.md: 200 pair rows (32 of them a job alone), 48 isolated rows.
	alone := 0
	for _, r := range d.Rows {
		if r.Alone {
			alone++
		}
	}
	if len(d.Rows) != 200 || alone != 32 || len(d.Singles) != 48 {
		t.Fatalf("rows %d (alone %d), singles %d; want 200 (32), 48", len(d.Rows), alone, len(d.Singles))
	}
	// Line 35 of norm_speed.csv: index 33, vgg19 next to resnet50 on one GPU.
	want := Row{Index: 33, A: Config{"vgg19", "ImageNet", 1, "32", NA}, B: Config{"resnet50", "ImageNet", 1, "32", ""},
		SpeedA: 0.8, SpeedB: 0.41, CoRanks: "0", Line: 35}
	if diff := cmp.Diff(want, d.Rows[33]); diff != "" {
		t.Errorf("row 33 (-want +got):\n%s", diff)
	}
	// Line 2 of norm_speed.csv: Bert-Base alone, pipeline split 6,6.
	if r := d.Rows[0]; !r.Alone || r.A.Strategy != "6,6" || r.A.Batch != "256/16" || r.SpeedA != 0.52 || r.B.Model != Empty {
		t.Errorf("row 0 = %+v", r)
	}
	// Last line of raw_single.csv (49): GPT2-XL DP24 on 8 GPUs at 0.08.
	wantS := Single{Config: Config{"GPT2-XL", "WikiText", 8, "512/2", "DP24"}, Index: 8, Speed: 0.08, Line: 49}
	if diff := cmp.Diff(wantS, d.Singles[47]); diff != "" {
		t.Errorf("last single (-want +got):\n%s", diff)
	}
	if got := d.Rows[33].A.String(); got != "vgg19 (ImageNet, batch 32) x1" {
		t.Errorf("String = %q", got)
	}
	if got := d.Rows[0].A.String(); got != "Bert-Base (WikiText, batch 256/16, 6,6) x2" {
		t.Errorf("String = %q", got)
	}
}

func TestErrors(t *testing.T) {
	head := strings.Join(PairColumns, ",") + "\n"
	ok := `0,resnet50,ImageNet,1,32,0.76,0,NA,resnet50,ImageNet,1,32,0.76` + "\n"
	cases := []struct{ in, want string }{
		{"", "p.csv:1: empty file"},
		{"index,model1\n", "p.csv:1: header"},
		{head, "p.csv:2: no rows"},
		{head + ok + "1,resnet50\n", "p.csv:3: 2 fields, want 13"},
		{head + `0,resnet50,ImageNet,x,32,0.76,0,NA,resnet50,ImageNet,1,32,0.76` + "\n", "p.csv:2: column gpu_num1: \"x\" is not an integer in 1..64"},
		{head + `0,resnet50,ImageNet,1,32/a,0.76,0,NA,resnet50,ImageNet,1,32,0.76` + "\n", "column batch_size1"},
		{head + `0,resnet50,ImageNet,1,32,1.5,0,NA,resnet50,ImageNet,1,32,0.76` + "\n", "column speed1: \"1.5\" is not a number in [0, 1]"},
		{head + ok + `0,resnet50,ImageNet,1,32,0.7,0,NA,resnet50,ImageNet,1,32,NaN` + "\n", "p.csv:3: column speed2"},
		{head + `0,Empty,ImageNet,1,32,0.7,0,NA,resnet50,ImageNet,1,32,0.5` + "\n", "column model1: Empty is not a model"},
		{head + `0,resnet50,,1,32,0.7,0,NA,resnet50,ImageNet,1,32,0.5` + "\n", "column dataset1: empty"},
		{head + `0,resnet50,ImageNet,1,32,0.7,NA,NA,Empty,NA,0,0,0.3` + "\n", "column speed2: \"0.3\": a job alone"},
		{head + `0,resnet50,ImageNet,1,32,0.7,NA,NA,Empty,NA,1,0,0.0` + "\n", "column gpu_num2"},
		{head + ok + `1,"a` + "\n", "p.csv:3: "},
	}
	for _, c := range cases {
		_, err := ReadPairs(strings.NewReader(c.in), "p.csv")
		var pe *trace.ParseError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want a ParseError containing %q", c.in, err, c.want)
		}
	}
	shead := strings.Join(SingleColumns, ",") + "\n"
	scases := []struct{ in, want string }{
		{shead, "s.csv:2: no rows"},
		{shead + "0,resnet50,ImageNet,1,32,14.41,NA\n0,vgg19,ImageNet,1,32,-1,NA\n", "s.csv:3: column speed: \"-1\""},
		{shead + "0,resnet50,ImageNet,0,32,14.41,NA\n", "column gpu_num"},
		{shead + "0,resnet50,ImageNet,1,32,14.41,\n", "column pipeline_strategy: empty"},
		{shead + "-1,resnet50,ImageNet,1,32,14.41,NA\n", "column index"},
	}
	for _, c := range scases {
		_, err := ReadSingle(strings.NewReader(c.in), "s.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadPairs(f *testing.F) {
	f.Add(normCSV[:1500])
	f.Add(normCSV[len(normCSV)-1500:])
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadPairs(bytes.NewReader(b), "f")
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a ParseError with a line", err)
			}
			return
		}
		for _, r := range rows {
			if !(r.SpeedA >= 0 && r.SpeedA <= 1 && r.SpeedB >= 0 && r.SpeedB <= 1) || r.A.GPUs < 1 || r.A.GPUs > MaxGPUs {
				t.Fatalf("bad row accepted: %+v", r)
			}
			if r.Alone != (r.B.Model == Empty) || r.Alone && (r.SpeedB != 0 || r.B.GPUs != 0) || !r.Alone && r.B.GPUs < 1 {
				t.Fatalf("inconsistent row accepted: %+v", r)
			}
		}
	})
}

func FuzzReadSingle(f *testing.F) {
	f.Add(singleCSV[:600])
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadSingle(bytes.NewReader(b), "f")
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a ParseError with a line", err)
			}
			return
		}
		for _, s := range rows {
			if !(s.Speed >= 0 && s.Speed <= MaxSpeed) || s.GPUs < 1 || s.Model == "" || s.Strategy == "" {
				t.Fatalf("bad row accepted: %+v", s)
			}
		}
	})
}
