package validate

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
)

const testTraces = "testdata/traces"

func findRow(t *testing.T, rows []Row, model, gpu, workload string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Model == model && r.GPU == gpu && r.Workload == workload {
			return r
		}
	}
	t.Fatalf("no row %s/%s/%s in %+v", model, gpu, workload, rows)
	return Row{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMeasureByHand(t *testing.T) {
	res, err := Measure(testTraces, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	// Zeus P100, cifar100/shufflenetv2, limits 125/150/175 W: measured
	// 108.444..., 127.481..., 136.787... W; pwr predicts the catalog P100
	// TDP, 250 W, for each. APE = (250-m)/m, all positive, so MAPE = bias.
	ms := []float64{108.44413421654478, 127.4817870695554, 136.78792402073682}
	var ape float64
	for _, m := range ms {
		ape += (250 - m) / m
	}
	// p95 of 3 values by nearest rank: ceil(0.95*3) = 3rd, the largest
	// error 250-108.44 = 141.56 W.
	want := Row{Model: "pwr", GPU: "P100", Workload: "cifar100/shufflenetv2", Points: 3,
		MAPE: 100 * ape / 3, Bias: 100 * ape / 3, P95AbsW: 250 - ms[0],
		MeanMeasuredW: (ms[0] + ms[1] + ms[2]) / 3, MeanPredictedW: 250}
	got := findRow(t, res.Rows, "pwr", "P100", "cifar100/shufflenetv2")
	if diff := cmp.Diff(want, got, cmp.Comparer(near)); diff != "" {
		t.Errorf("P100 row (-want +got):\n%s", diff)
	}
	// Perseus bloom on A100 SXM: power = energy/time per row, against
	// the catalog A100's 400 W. Row 1: 24.150648/0.051231216 = 471.4 W,
	// above the TDP: a negative error.
	rowsW := []float64{24.150648000000043 / 0.05123121643066401, 45.96569999999972 / 0.09906433725357054, 24.019782000000117 / 0.051038084506988525}
	var bias float64
	for _, m := range rowsW {
		bias += (400 - m) / m
	}
	got = findRow(t, res.Rows, "pwr", "A100-SXM", "bloom")
	if got.Points != 3 || !near(got.Bias, 100*bias/3) {
		t.Errorf("A100 bloom: %d points bias %v%%, want 3 and %v%%", got.Points, got.Bias, 100*bias/3)
	}
	// By setting: the P100 rows at limit 125 W are one point, 108.44 W
	// measured against 250 W; A100 at 1410 MHz are bloom's first two rows
	// (the third is 1395 MHz) and gpt3-175b's first two: four points.
	var p125, a1410 *Row
	for i, r := range res.BySetting {
		switch {
		case r.GPU == "P100" && r.Knob == "power limit W" && r.KnobValue == 125:
			p125 = &res.BySetting[i]
		case r.GPU == "A100-SXM" && r.Knob == "frequency MHz" && r.KnobValue == 1410:
			a1410 = &res.BySetting[i]
		}
	}
	if p125 == nil || p125.Points != 1 || !near(p125.MAPE, 100*(250-ms[0])/ms[0]) {
		t.Errorf("P100 at 125 W: %+v, want 1 point, MAPE %v", p125, 100*(250-ms[0])/ms[0])
	}
	gpt := []float64{23.80547200000007 / 0.05016166687011708, 44.584247999999675 / 0.092953779220581}
	wantBias := 100 * ((400-rowsW[0])/rowsW[0] + (400-rowsW[1])/rowsW[1] + (400-gpt[0])/gpt[0] + (400-gpt[1])/gpt[1]) / 4
	if a1410 == nil || a1410.Points != 4 || !near(a1410.Bias, wantBias) {
		t.Errorf("A100 at 1410 MHz: %+v, want 4 points, bias %v%%", a1410, wantBias)
	}
	// A40 and RTX6000 have no catalog entry: reported, not dropped.
	for _, g := range []string{"A40", "RTX6000"} {
		if !slices.ContainsFunc(res.Uncovered, func(s string) bool { return strings.HasPrefix(s, "pwr on "+g+":") }) {
			t.Errorf("uncovered %v does not name %s", res.Uncovered, g)
		}
		for _, r := range res.Rows {
			if r.GPU == g {
				t.Errorf("row for uncovered GPU: %+v", r)
			}
		}
	}
	// The "all" row pools every workload of a GPU: 3 sgemm + 3 resnet +
	// 3 bert + 3 pagerank rows of Longhorn.
	if r := findRow(t, res.Rows, "pwr", "V100-Longhorn", "all"); r.Points != 12 {
		t.Errorf("Longhorn all: %d points, want 12", r.Points)
	}
}

func TestNearestRank(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 0},   // ceil(0.95) = 1st
		{20, 18}, // ceil(19) = 19th
		{21, 19}, // ceil(19.95) = 20th
	} {
		if got := nearestRank(c.n, 0.95); got != c.want {
			t.Errorf("nearestRank(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// copyTraces copies the test traces to a fresh folder, editing file rel
// with edit.
func copyTraces(t *testing.T, rel string, edit func(string) string) string {
	return copyFrom(t, testTraces, rel, edit)
}

// copyFrom copies the measurement files under src to a fresh folder,
// editing file rel with edit.
func copyFrom(t *testing.T, src, rel string, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return err
		}
		r, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.ToSlash(r) == rel {
			b = []byte(edit(string(b)))
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(r)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, r), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func runStudy(t *testing.T, traces string) map[string][]byte {
	t.Helper()
	st := &Study{}
	fs := flag.NewFlagSet("power", flag.ContinueOnError)
	st.Flags(fs)
	if err := fs.Parse([]string{"--traces", traces}); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	res, err := st.Run(context.Background(), &experiment.Env{Version: "test", Catalog: hw.Default()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res[0].Write(dir); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDeterministic runs the study twice and compares every file's bytes,
// and checks that reversing a file's rows changes no error figure.
func TestDeterministic(t *testing.T) {
	a, b := runStudy(t, testTraces), runStudy(t, testTraces)
	if len(a) < 5 {
		t.Fatalf("only %d files", len(a))
	}
	for n := range a {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s differs between two runs", n)
		}
	}
	rev := copyTraces(t, "zeus-nsdi23/summary_power_p100.csv", reverseRows)
	if c := runStudy(t, rev); !bytes.Equal(a["errors.csv"], c["errors.csv"]) {
		t.Errorf("errors.csv depends on row order:\n%s\nreversed:\n%s", a["errors.csv"], c["errors.csv"])
	}
}

// reverseRows reverses a CSV file's data rows.
func reverseRows(s string) string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Reverse(l[1:])
	return strings.Join(l, "\n") + "\n"
}

func TestBadInput(t *testing.T) {
	const zeus = "zeus-nsdi23/summary_power_p100.csv"
	for _, c := range []struct {
		name, file string
		edit       func(string) string
		want       []string
	}{
		{"missing column", zeus, func(s string) string { return strings.Replace(s, "average_power", "avg_power", 1) },
			[]string{zeus, "line 1", "field average_power", "missing column"}},
		{"NaN power", zeus, func(s string) string { return strings.Replace(s, "127.4817870695554", "NaN", 1) },
			[]string{zeus, "line 3", "field average_power", "NaN"}},
		{"infinite power", zeus, func(s string) string { return strings.Replace(s, "127.4817870695554", "+Inf", 1) },
			[]string{zeus, "line 3", "field average_power"}},
		{"negative power", zeus, func(s string) string { return strings.Replace(s, "136.78792402073682", "-5", 1) },
			[]string{zeus, "line 4", "field average_power", "-5"}},
		{"bad power limit", zeus, func(s string) string { return strings.Replace(s, "adadelta,150,", "adadelta,-150,", 1) },
			[]string{zeus, "line 3", "field power_limit"}},
		{"not a number", "gpu-variability-pal/longhorn/sgemm-longhorn-agg.csv", func(s string) string { return strings.Replace(s, "296.79", "hot", 1) },
			[]string{"sgemm-longhorn-agg.csv", "line 2", "field pwr"}},
		{"missing device", "gpu-variability-pal/longhorn/sgemm-longhorn-agg.csv", func(s string) string {
			return strings.Replace(s, "GPU-e1342d2b-9672-84a6-3f4f-793c5cec8f2f", "", 1)
		}, []string{"sgemm-longhorn-agg.csv", "line 2", "field uuid", "empty"}},
		{"missing uuid column", "gpu-variability-pal/longhorn/pagerank-longhorn-agg.csv", func(s string) string { return strings.Replace(s, ",uuid,", ",gpu,", 1) },
			[]string{"pagerank-longhorn-agg.csv", "line 1", "field uuid", "missing column"}},
		{"zero time", "perseus-sosp24-dvfs/stage_profile/bloom+a40_bf16.csv", func(s string) string {
			l := strings.Split(s, "\n")
			f := strings.Split(l[2], ",")
			f[3] = "0"
			l[2] = strings.Join(f, ",")
			return strings.Join(l, "\n")
		}, []string{"bloom+a40_bf16.csv", "line 3", "field time"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Measure(copyTraces(t, c.file, c.edit), hw.Default())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	t.Run("GPU the catalog does not know", func(t *testing.T) {
		cat, err := hw.Parse([]byte("gpus:\n  - {name: V100M32, idle_w: 30, tdp_w: 300, memory_gib: 32, source: test}\n  - {name: V100M16, idle_w: 30, tdp_w: 300, memory_gib: 16, source: test}\n  - {name: A100, idle_w: 50, tdp_w: 400, memory_gib: 80, source: test}\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Measure(testTraces, cat)
		if err == nil {
			t.Fatal("no error for P100 missing from the catalog")
		}
		for _, w := range []string{"summary_power_p100.csv", "line 2", "field gpu", "P100"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
	})
}

// TestFullTraces runs the study on the shared traces, when present, twice:
// byte-identical and under a minute.
func TestFullTraces(t *testing.T) {
	full := filepath.Join("..", "..", DefaultTraces)
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := os.Stat(full); err != nil {
		t.Skipf("no shared traces at %s", full)
	}
	start := time.Now()
	a := runStudy(t, full)
	if d := time.Since(start); d > time.Minute {
		t.Errorf("study took %v, want under a minute", d)
	}
	b := runStudy(t, full)
	for n := range a {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s differs between two runs", n)
		}
	}
	// 476 V100 rows in reverse order: the same error figures to the
	// last bit.
	c := runStudy(t, copyFrom(t, full, "zeus-nsdi23/summary_power_v100.csv", reverseRows))
	if !bytes.Equal(a["errors.csv"], c["errors.csv"]) {
		t.Errorf("errors.csv depends on row order")
	}
}
