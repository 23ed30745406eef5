package calibrate_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/calibrate"
	"github.com/wattsched/wattsched/power/prom"
)

// gpu is one GPU's power and utilisation series at times 0, 1, ... s.
func gpu(model, id string, util, watts []float64) []prom.Series {
	mk := func(name string, v []float64) prom.Series {
		s := prom.Series{Labels: map[string]string{"__name__": name, "modelName": model, "UUID": id}}
		for i, x := range v {
			s.Points = append(s.Points, prom.Point{Time: time.Unix(int64(i), 0), Value: x})
		}
		return s
	}
	return []prom.Series{mk("DCGM_FI_DEV_GPU_UTIL", util), mk("DCGM_FI_DEV_POWER_USAGE", watts)}
}

// A noiseless line is recovered exactly: 50 W idle, 250 W full, so
// 50 + 2 W per percent.
func TestFitLine(t *testing.T) {
	util := []float64{0, 10, 50, 90, 100}
	watts := []float64{50, 70, 150, 230, 250}
	fits, err := calibrate.Fit(gpu("Tesla T4", "g0", util, watts), calibrate.Default(), hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	g := fits[0].GPU
	if g.Name != "Tesla-T4-measured" || abs(float64(g.IdleW)-50) > 1e-6 || abs(float64(g.TDPW)-250) > 1e-6 || g.MemoryGiB != 16 {
		t.Errorf("got %+v, want Tesla-T4-measured 50 W idle, 250 W full, 16 GiB (the catalog's T4 by its alias)", g)
	}
	if fits[0].RMSEW > 1e-6 || fits[0].Samples != 5 || fits[0].GPUs != 1 {
		t.Errorf("fit %+v", fits[0])
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Fits the catalog would refuse, or that would extrapolate, are errors
// naming the model.
func TestFitRefuses(t *testing.T) {
	o := calibrate.Default()
	o.From = "x.json"
	cases := map[string]struct {
		util, watts []float64
		knots       []float64
		want        string
	}{
		"narrow range": {[]float64{40, 50, 60}, []float64{1, 2, 3}, nil, `model "M": utilisation spans only 40%..60%`},
		"decreasing":   {[]float64{0, 50, 100}, []float64{100, 50, 20}, nil, `model "M": the fitted model is not a valid catalog entry`},
		"bent down":    {[]float64{0, 25, 50, 75, 100}, []float64{10, 60, 30, 40, 50}, []float64{0.25}, `not a valid catalog entry`},
	}
	for name, tc := range cases {
		o.Knots = tc.knots
		_, err := calibrate.Fit(gpu("M", "g", tc.util, tc.watts), o, hw.Default())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "x.json: ") {
			t.Errorf("%s: error %v, want x.json: ... %s", name, err, tc.want)
		}
	}
}

// The catalog file parses as a bring-your-own-hardware file and joins the
// embedded catalog.
func TestCatalogYAMLRoundTrip(t *testing.T) {
	o := calibrate.Default()
	o.Knots = []float64{0.5}
	fits, err := calibrate.Fit(gpu("Tesla T4", "g0", []float64{0, 25, 50, 75, 100}, []float64{10, 30, 50, 60, 70}), o, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	b, err := calibrate.CatalogYAML(fits, "test\nheader")
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := hw.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.Default().With(f, path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.GPU("Tesla-T4-measured")
	if err != nil {
		t.Fatal(err)
	}
	// Points (0,10) (25,30) (50,50): slope 0.8 W/% to 50 W; (75,60)
	// (100,70): 0.4 W/% to 70 W: the fit is exact.
	if len(g.Curve) != 1 || abs(float64(g.Curve[0].Watts)-50) > 1e-6 || abs(float64(g.IdleW)-10) > 1e-6 || abs(float64(g.TDPW)-70) > 1e-6 {
		t.Errorf("read back %+v", g)
	}
	if !strings.HasPrefix(string(b), "# test\n# header\n") {
		t.Errorf("header: %q", b[:20])
	}
}

// fakeAlloc gives GPU g of node "n1" the share shares[g][t] at second t.
type fakeAlloc map[int][]float64

func (f fakeAlloc) HasNode(n string) bool { return n == "n1" }
func (f fakeAlloc) Nodes() []string       { return []string{"n1"} }
func (f fakeAlloc) Share(n string, g int, at time.Time) (float64, bool) {
	s := f[g]
	i := int(at.Unix())
	if n != "n1" || i >= len(s) || s[i] < 0 {
		return 0, false // a negative share stands for "unknown then"
	}
	return s[i], true
}

// onNode labels a GPU's series with its node and index.
func onNode(ss []prom.Series, node, gpu string) []prom.Series {
	for _, s := range ss {
		s.Labels["Hostname"], s.Labels["gpu"] = node, gpu
	}
	return ss
}

// Power follows the allocated share, not the utilisation: 50 W idle,
// 250 W full, so 50 + 200 x share. The utilisation (half the share, and
// noisy) is ignored; samples of another node, or at a time the share is
// unknown, are left out and counted.
func TestFitAllocated(t *testing.T) {
	share := []float64{0, 0.25, 0.5, -1, 1, 0.1}
	watts := []float64{50, 100, 150, 999, 250, 70}
	util := []float64{3, 10, 27, 50, 85, 1}
	series := append(onNode(gpu("Tesla T4", "g0", util, watts), "n1", "0"), onNode(gpu("Tesla T4", "g9", util, watts), "n2", "0")...)
	o := calibrate.Default()
	o.AllocFrom = "pods.json"
	fits, un, err := calibrate.FitAllocated(series, fakeAlloc{0: share}, o, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	g := fits[0].GPU
	if abs(float64(g.IdleW)-50) > 1e-6 || abs(float64(g.TDPW)-250) > 1e-6 || fits[0].Samples != 5 || fits[0].GPUs != 1 {
		t.Errorf("got %+v, want 50 W idle and 250 W full from 5 samples of 1 GPU", fits[0])
	}
	if un.OtherNode != 6 || un.Unknown != 1 || len(un.OtherNodes) != 1 || un.OtherNodes[0] != "n2" {
		t.Errorf("unpaired %+v, want 6 samples of n2 and 1 unknown", un)
	}
	if !strings.Contains(g.Source, "vs allocated GPU share (pods of pods.json)") || !strings.Contains(g.Source, "100% allocated share") {
		t.Errorf("source %q", g.Source)
	}
	// Utilisation alone would give another line: a check that the two
	// differ is what makes the test above mean something.
	uf, err := calibrate.Fit(series[:2], calibrate.Default(), hw.Default())
	if err != nil || abs(float64(uf[0].GPU.TDPW)-250) < 10 {
		t.Errorf("the utilisation fit: %v, %+v; want it to run and miss 250 W: the case does not tell share from utilisation", err, uf)
	} else {
		t.Logf("over utilisation instead: %v W idle, %v W full", uf[0].GPU.IdleW, uf[0].GPU.TDPW)
	}
}

// Unlabelled or unmatched series are errors naming what was looked for.
func TestFitAllocatedErrors(t *testing.T) {
	o := calibrate.Default()
	o.From, o.AllocFrom = "q.json", "pods.json"
	w := []float64{50, 250}
	cases := map[string]struct {
		series []prom.Series
		want   string
	}{
		"no node label":   {gpu("M", "g", w, w), `q.json: data.result[1].metric: no "Hostname" label (the node)`},
		"bad GPU label":   {onNode(gpu("M", "g", w, w), "n1", "x"), `data.result[1].metric: label "gpu" "x": want a GPU index`},
		"no node matched": {onNode(gpu("M", "g", w, w), "n7", "0"), `no DCGM_FI_DEV_POWER_USAGE sample matched a node and GPU of pods.json (2 of a node it lacks, 0 while a pod with unknown GPUs ran): looked for the node in label "Hostname" and the GPU index in label "gpu"; the series' nodes: n7; the pods' nodes: n1`},
		"narrow share":    {onNode(gpu("M", "g", w, w), "n1", "1"), `model "M": allocated share spans only 40%..50%`},
	}
	for name, tc := range cases {
		_, _, err := calibrate.FitAllocated(tc.series, fakeAlloc{1: {0.4, 0.5}}, o, hw.Default())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
