package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// gpuModelsFixture is variantsFixture's cluster (T4, V100M16 and A100
// nodes) with two CPU-only nodes and every fifth pod CPU-only, under PWR
// and BestFit.
func gpuModelsFixture(t *testing.T) string {
	t.Helper()
	dir := variantsFixture(t)
	f, err := os.OpenFile(filepath.Join(dir, "nodes.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("c0,32000,131072,0,\nc1,32000,131072,0,\n")
	f.Close()
	pods := podsHead
	for i := 0; i < 40; i++ {
		gpus, milli := "1", []string{"250", "500", "1000"}[i%3]
		if i%5 == 0 {
			gpus, milli = "0", "0"
		}
		pods += "p" + strconv.Itoa(i) + ",2000,1024," + gpus + "," + milli + ",,LS,Running," + strconv.Itoa(i*300) + "," + strconv.Itoa(i*300+3600+(i%7)*900) + ",\n"
	}
	os.WriteFile(filepath.Join(dir, "pods.csv"), []byte(pods), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("name: models\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies:\n"+
		"  - {name: PWR, scorers: [{policy: pwr, weight: 1}]}\n  - {name: BestFit, scorers: [{policy: bestfit, weight: 1}]}\n"), 0o644)
	return dir
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// closeTo allows gpu_models.csv's six significant digits.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }

// The per-model accounting adds up to the run: per policy (and setting
// and seed), the models' energies sum to the run's energy, their busy
// parts to energy minus idle, their pods started to the pods started; the
// models are the node list's (cpu for the nodes without a GPU), sorted.
func TestGPUModelsAddUp(t *testing.T) {
	dir := gpuModelsFixture(t)
	out := filepath.Join(dir, "run")
	if code, _, stderr := run(t, "run", "-c", filepath.Join(dir, "s.yaml"), "-o", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []struct {
			Policy     string
			Started    int     `json:"started"`
			Energy     float64 `json:"energy_kwh"`
			Dynamic    float64 `json:"dynamic_kwh"`
			ByGPUModel []struct {
				Model string `json:"gpu_model"`
			} `json:"by_gpu_model"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	type total struct{ energy, busy, started float64 }
	got := map[string]*total{}
	var models []string
	for _, r := range readCSV(t, filepath.Join(out, "gpu_models.csv")) {
		k := r["policy"]
		if got[k] == nil {
			got[k] = &total{}
		}
		got[k].energy += num(t, r["energy_kwh"])
		got[k].busy += num(t, r["busy_kwh"])
		got[k].started += num(t, r["pods_started"])
		if k == "PWR" {
			models = append(models, r["gpu_model"])
		}
		if !closeTo(num(t, r["busy_kwh"])+num(t, r["idle_kwh"]), num(t, r["energy_kwh"])) {
			t.Errorf("%v: busy + idle != energy", r)
		}
	}
	if want := []string{"A100", "T4", "V100M16", "cpu"}; len(models) != 4 || models[0] != want[0] || models[1] != want[1] || models[2] != want[2] || models[3] != want[3] {
		t.Errorf("PWR's models %q, want %q", models, want)
	}
	for _, p := range sum.Policies {
		g := got[p.Policy]
		if g == nil || !closeTo(g.energy, p.Energy) || !closeTo(g.busy, p.Dynamic) || g.started != float64(p.Started) {
			t.Errorf("%s: models sum to %+v; the run: energy %v kWh, dynamic %v kWh, %d started", p.Policy, g, p.Energy, p.Dynamic, p.Started)
		}
		if len(p.ByGPUModel) != 4 {
			t.Errorf("%s: summary.json by_gpu_model has %d models, want 4", p.Policy, len(p.ByGPUModel))
		}
	}

	// compare: per policy, setting and seed, the models' energies sum to
	// runs.csv's energy.
	out = filepath.Join(dir, "compare")
	if code, _, stderr := run(t, "compare", "-c", filepath.Join(dir, "s.yaml"), "-o", out, "--seeds", "2"); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	energy := map[string]float64{}
	for _, r := range readCSV(t, filepath.Join(out, "gpu_models.csv")) {
		energy[r["policy"]+"|"+r["variant"]+"|"+r["seed"]] += num(t, r["energy_kwh"])
	}
	runs := readCSV(t, filepath.Join(out, "runs.csv"))
	if len(runs) != len(energy) || len(runs) != 2*2+2 { // 2 policies x 2 seeds, PWR under the automatic power-down
		t.Errorf("%d runs, %d in gpu_models.csv; want 6 each", len(runs), len(energy))
	}
	for _, r := range runs {
		k := r["policy"] + "|" + r["variant"] + "|" + r["seed"]
		if e, ok := energy[k]; !ok || !closeTo(e, num(t, r["energy_kwh"])) {
			t.Errorf("%s: models sum to %v kWh, runs.csv %s", k, e, r["energy_kwh"])
		}
	}
}
