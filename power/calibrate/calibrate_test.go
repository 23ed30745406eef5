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
