package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/calibrate"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// The generated trace's GPU models: idle and full power per GPU, linear in
// utilisation, with uniform noise of +-0.5 W (T4-like) and +-3 W
// (H100-like).
var calibNodes = []promtest.Node{
	{Name: "t1", Model: "Tesla T4", GPUs: 2, IdleW: 10, FullW: 70, NoiseW: 0.5},
	{Name: "t2", Model: "Tesla T4", GPUs: 2, IdleW: 10, FullW: 70, NoiseW: 0.5},
	{Name: "h1", Model: "NVIDIA H100 80GB HBM3", GPUs: 4, IdleW: 70, FullW: 700, NoiseW: 3},
}

// calibrationData runs a real Prometheus scraping the replayed trace for
// about 15 s and returns its URL, the time range, and the range query's
// raw JSON as the server answered it.
func calibrationData(t *testing.T) (srv string, start, end time.Time, raw []byte) {
	t.Helper()
	exp := promtest.NewExporter(t, 3, calibNodes...)
	s := promtest.Start(t, exp.Target)
	start = time.Now().Truncate(time.Second)
	for exp.Steps() < 16 {
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // let the last scrape be stored
	end = time.Now().Truncate(time.Second)
	q := url.Values{"query": {calibrate.Default().Query()}, "start": {fmt.Sprint(start.Unix())}, "end": {fmt.Sprint(end.Unix())}, "step": {"1"}}
	resp, err := http.Get(s.URL + "/api/v1/query_range?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if raw, err = io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	return s.URL, start, end, raw
}

// readCatalog reads a calibrated file as the simulator does (--catalog:
// added to the embedded catalog).
func readCatalog(t *testing.T, path string) *hw.Catalog {
	t.Helper()
	f, err := hw.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.Default().With(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// calibrate recovers each model's idle and full power within 2% from a
// real Prometheus, both live and from the saved JSON; the catalog it
// writes is read back by the simulator's catalog loader and drives the
// PWR power model.
func TestCalibrateRecoversTrace(t *testing.T) {
	url, start, end, raw := calibrationData(t)
	dir := t.TempDir()
	saved := filepath.Join(dir, "query.json")
	if err := os.WriteFile(saved, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.yaml")
	recording := filepath.Join(dir, "recording.json")
	code, out, errs := run(t, "calibrate", "--prometheus", url, "--range", fmt.Sprintf("%d,%d,1s", start.Unix(), end.Unix()), "--save", recording, "-o", live)
	if code != 0 {
		t.Fatalf("live: exit %d: %s", code, errs)
	}
	t.Logf("live:\n%s", out)
	fromFile := filepath.Join(dir, "file.yaml")
	if code, out, errs = run(t, "calibrate", "--from", saved, "-o", fromFile); code != 0 {
		t.Fatalf("from file: exit %d: %s", code, errs)
	}
	curve := filepath.Join(dir, "curve.yaml")
	if code, out, errs = run(t, "calibrate", "--from", saved, "--curve", "0.5", "-o", curve); code != 0 {
		t.Fatalf("curve: exit %d: %s", code, errs)
	}
	t.Logf("curve:\n%s", out)
	truth := map[string][2]float64{"Tesla-T4-measured": {10, 70}, "NVIDIA-H100-80GB-HBM3-measured": {70, 700}}
	for _, path := range []string{live, fromFile, curve} {
		c := readCatalog(t, path)
		for name, want := range truth {
			g, err := c.GPU(name)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for i, got := range []hw.Watts{g.IdleW, g.TDPW} {
				margin := math.Abs(float64(got)-want[i]) / want[i]
				t.Logf("%s %s %s: %.3f W, truth %.0f W, off by %.2f%% (tolerance 2%%)", filepath.Base(path), name, []string{"idle", "full"}[i], got, want[i], margin*100)
				if margin > 0.02 {
					t.Errorf("%s %s: %v W, want %v W within 2%%", path, name, got, want[i])
				}
			}
			if path == curve {
				mid := (want[0] + want[1]) / 2
				if len(g.Curve) != 1 || math.Abs(float64(g.Curve[0].Watts)-mid)/mid > 0.02 {
					t.Errorf("%s %s: curve %v, want {0.5, %v W} within 2%%", path, name, g.Curve, mid)
				}
			}
		}
	}
	// The simulator's power model reads it: an idle node of 4 calibrated
	// H100s draws 4 x its idle power; one with a GPU fully allocated, the
	// fitted full power on that GPU.
	c := readCatalog(t, fromFile)
	cl, err := cluster.New(c, []cluster.NodeSpec{{Name: "n", CPUMilli: 1000, MemMiB: 1024, GPUs: 4, GPUModel: "NVIDIA-H100-80GB-HBM3-measured"}})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := c.GPU("NVIDIA-H100-80GB-HBM3-measured")
	if got := power.GPUPower(cl.Nodes[0]); got != 4*g.IdleW {
		t.Errorf("idle node GPU power %v W, want 4 x %v W", got, g.IdleW)
	}
	cl.Nodes[0].GPUFree[0] = 0
	if got := power.GPUPower(cl.Nodes[0]); got != 3*g.IdleW+g.TDPW {
		t.Errorf("node with one busy GPU %v W, want 3 x %v + %v W", got, g.IdleW, g.TDPW)
	}
	// Same input, same bytes.
	again := filepath.Join(dir, "again.yaml")
	if code, _, errs := run(t, "calibrate", "--from", saved, "-o", again); code != 0 {
		t.Fatal(errs)
	}
	a, _ := os.ReadFile(fromFile)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Error("calibrating the same file twice gave different bytes")
	}

	t.Run("bad input", func(t *testing.T) {
		calibrateBadInput(t, raw)
	})
	t.Run("saved answer feeds a scenario", func(t *testing.T) {
		calibrateSavedIntoScenario(t, dir, live, recording)
	})
}

// The answer calibrate --save wrote is the server's: calibrating from it
// gives the live run's models, and a replay scenario on the same nodes
// (its node list naming the calibrated models, its catalog the calibrated
// file) counts it in its power gate through the measured section: the
// operator's path from Prometheus to a simulation of their own cluster.
func calibrateSavedIntoScenario(t *testing.T, dir, live, recording string) {
	fromSaved := filepath.Join(dir, "from-saved.yaml")
	if code, _, errs := run(t, "calibrate", "--from", recording, "-o", fromSaved); code != 0 {
		t.Fatalf("from the saved answer: exit %d: %s", code, errs)
	}
	lc, sc := readCatalog(t, live), readCatalog(t, fromSaved)
	for _, name := range []string{"Tesla-T4-measured", "NVIDIA-H100-80GB-HBM3-measured"} {
		l, _ := lc.GPU(name)
		s, _ := sc.GPU(name)
		if l.IdleW != s.IdleW || l.TDPW != s.TDPW {
			t.Errorf("%s: live %v/%v W, from the saved answer %v/%v W", name, l.IdleW, l.TDPW, s.IdleW, s.TDPW)
		}
	}
	files := map[string]string{
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nt1,32000,131072,2,Tesla-T4-measured\nt2,32000,131072,2,Tesla-T4-measured\nh1,64000,524288,4,NVIDIA-H100-80GB-HBM3-measured\n",
		"pods.csv": "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
			"p0,4000,8192,1,1000,,LS,Running,0,30,\np1,4000,8192,1,500,,LS,Running,2,30,\np2,4000,8192,2,1000,,LS,Running,5,30,\np3,4000,8192,1,1000,,LS,Running,9,30,\n",
		"s.yaml": "name: e2e\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\ncatalog: " + live + "\n" +
			"policies: [{name: BestFit, scorers: [{policy: bestfit, weight: 1}]}]\npower_limit: {watts: 100000}\nmeasured: {file: " + recording + "}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "e2e")
	code, stdout, errs := run(t, "run", "-c", filepath.Join(dir, "s.yaml"), "-o", out)
	if code != 0 {
		t.Fatalf("scenario: exit %d: %s", code, errs)
	}
	var sum struct {
		Policies []struct {
			Started  int `json:"started"`
			Measured struct {
				Lookups, Measured int
				Fallbacks         map[string]int
			} `json:"measured"`
		} `json:"policies"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := sum.Policies[0]
	fell := 0
	for _, n := range p.Measured.Fallbacks {
		fell += n
	}
	// Every decision while the pods arrive (0-9 s) falls inside the
	// recording (17 s), so each node looked up has a reading.
	if p.Started != 4 || p.Measured.Measured == 0 || p.Measured.Measured+fell != p.Measured.Lookups {
		t.Errorf("scenario on the recording: %+v\n%s", p, stdout)
	}
	t.Logf("scenario on the recording: %d pods started, lookups %+v", p.Started, p.Measured)
}

// Bad input from a real server's JSON, altered: each error names the
// file, the JSON path or flag, and nothing is written.
func calibrateBadInput(t *testing.T, raw []byte) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	result := func(d map[string]any) []any { return d["data"].(map[string]any)["result"].([]any) }
	alter := func(f func(d map[string]any)) []byte {
		var d map[string]any
		_ = json.Unmarshal(raw, &d)
		f(d)
		b, _ := json.Marshal(d)
		return b
	}
	firstPower := func(d map[string]any) (int, map[string]any) {
		for i, r := range result(d) {
			m := r.(map[string]any)
			if m["metric"].(map[string]any)["__name__"] == "DCGM_FI_DEV_POWER_USAGE" {
				return i, m
			}
		}
		t.Fatal("no power series")
		return 0, nil
	}
	i, _ := firstPower(doc)
	cases := []struct {
		name string
		data []byte
		args []string
		want string
	}{
		{"NaN watts", alter(func(d map[string]any) {
			_, m := firstPower(d)
			m["values"].([]any)[2].([]any)[1] = "NaN"
		}), nil, fmt.Sprintf("data.result[%d].values[2]: DCGM_FI_DEV_POWER_USAGE NaN W", i)},
		{"negative watts", alter(func(d map[string]any) {
			_, m := firstPower(d)
			m["values"].([]any)[1].([]any)[1] = "-4"
		}), nil, fmt.Sprintf("data.result[%d].values[1]", i)},
		{"value not a string", alter(func(d map[string]any) {
			_, m := firstPower(d)
			m["values"].([]any)[0].([]any)[1] = 12
		}), nil, fmt.Sprintf("data.result[%d].values[0]: [1]: want a quoted number", i)},
		{"no model label", alter(func(d map[string]any) {
			_, m := firstPower(d)
			delete(m["metric"].(map[string]any), "modelName")
		}), nil, fmt.Sprintf("data.result[%d].metric: no \"modelName\" label", i)},
		{"error answer", []byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`), nil, `status: "error": parse error (bad_data)`},
		{"instant vector", []byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`), nil, `data.resultType: "vector", want "matrix"`},
		{"not JSON", []byte(`<html>`), nil, "response:"},
		{"wrong metric names", raw, []string{"--util-metric", "DCGM_FI_DEV_MEM_COPY_UTIL"}, "no GPU has both"},
		{"bad curve", raw, []string{"--curve", "0.5,0.2"}, "--curve: item 2"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(in, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.yaml")
			code, _, errs := run(t, append([]string{"calibrate", "--from", in, "-o", out}, tc.args...)...)
			if code == 0 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q: want an error containing %q", code, errs, tc.want)
			}
			if tc.args == nil && !strings.Contains(errs, in) {
				t.Errorf("stderr %q does not name the file", errs)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written despite the error")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), ".out.yaml") {
						t.Errorf("temporary file %s left behind", e.Name())
					}
				}
			}
		})
	}
	// An existing file is kept without --force.
	in := filepath.Join(dir, "ok.json")
	_ = os.WriteFile(in, raw, 0o644)
	keep := filepath.Join(dir, "keep.yaml")
	_ = os.WriteFile(keep, []byte("mine"), 0o644)
	if code, _, errs := run(t, "calibrate", "--from", in, "-o", keep); code == 0 || !strings.Contains(errs, "exists") {
		t.Errorf("overwrote an existing file: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Error("existing file changed")
	}
}

// Without a server: the saved answer of a real Prometheus (testdata)
// gives the truth within 2% and the golden catalog byte for byte.
func TestCalibrateFromSavedQuery(t *testing.T) {
	out := filepath.Join(t.TempDir(), "catalog.yaml")
	code, stdout, errs := run(t, "calibrate", "--from", "testdata/calibrate/query-range.json", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Logf("\n%s", stdout)
	c := readCatalog(t, out)
	for name, want := range map[string][2]float64{"Tesla-T4-measured": {10, 70}, "NVIDIA-H100-80GB-HBM3-measured": {70, 700}} {
		g, err := c.GPU(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range []hw.Watts{g.IdleW, g.TDPW} {
			if m := math.Abs(float64(got)-want[i]) / want[i]; m > 0.02 {
				t.Errorf("%s: %v W, want %v W within 2%% (off by %.2f%%)", name, got, want[i], m*100)
			}
		}
	}
	got, _ := os.ReadFile(out)
	golden := "testdata/calibrate/catalog.yaml"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("catalog differs from %s:\n%s", golden, got)
	}
}

// --save is checked before any query: only with --prometheus, not the
// catalog's own name, not over an existing file without --force.
func TestCalibrateSaveUsage(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "c.yaml")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--from", existing, "--save", filepath.Join(dir, "s.json")}, 2, "calibrate --save: only with --prometheus"},
		{[]string{"--prometheus", "http://127.0.0.1:1", "--range", "0,60", "--save", cat}, 2, "--save and -o name the same file"},
		{[]string{"--prometheus", "http://127.0.0.1:1", "--range", "0,60", "--save", existing}, 1, "old.json exists (use --force to replace it)"},
	} {
		code, _, errs := run(t, append(append([]string{"calibrate"}, c.args...), "-o", cat)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
		if _, err := os.Stat(cat); err == nil {
			t.Errorf("%v: catalog written", c.args)
		}
	}
}
