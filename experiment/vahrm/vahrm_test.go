package vahrm_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
)

func TestReproduceVAHRMQuick(t *testing.T) {
	o := vahrm.Options{Registries: builtin.Registries(), Jobs: 400, Quick: true, Seed: 7}
	a, err := vahrm.Reproduce("test", o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := vahrm.Reproduce("test", o)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("two reproductions with the same seed differ")
	}
	// 9 workloads x 7 systems relative to VU-FCFS.
	if len(a.Main) != 63 || len(a.Congested) != 63 {
		t.Fatalf("main rows %d/%d, want 63", len(a.Main), len(a.Congested))
	}
	for _, set := range [][]vahrm.Relative{a.Main, a.Congested, a.SR, a.PCR, a.Beta, a.BetaRaw, a.FirstRun, a.ModelErr} {
		for _, r := range set {
			if r.MaxPredW > r.CapW*(1+1e-9) {
				t.Fatalf("%s %s w%d: predicted %v W above the %v W cap at a start", r.Setting, r.System, r.Workload, r.MaxPredW, r.CapW)
			}
			if r.MaxWaitS > 7*24*3600 {
				t.Fatalf("%s %s w%d waited %v s, past the one-week limit", r.Setting, r.System, r.Workload, r.MaxWaitS)
			}
		}
	}
	// The beta sweep runs under both readings of beta's units, and the
	// reading matters at the paper's beta.
	if len(a.BetaRaw) != len(a.Beta) || len(a.Beta) == 0 {
		t.Fatalf("beta sweep: %d rows normalised, %d raw", len(a.Beta), len(a.BetaRaw))
	}
	differ := false
	for i, r := range a.Beta {
		raw := a.BetaRaw[i]
		if raw.Setting != r.Setting || raw.Workload != r.Workload || raw.System == r.System {
			t.Fatalf("row %d: normalised %s %s w%d, raw %s %s w%d", i, r.Setting, r.System, r.Workload, raw.Setting, raw.System, raw.Workload)
		}
		if r.Setting == "beta=0.0002441" && r.MeanWaitS != raw.MeanWaitS {
			differ = true
		}
	}
	if !differ {
		t.Error("at beta = (1/4)^6 the normalised and raw readings wait exactly alike on every workload")
	}
	if len(a.Claims) < 10 || len(a.Models) != 8 {
		t.Fatalf("%d claims, %d model rows", len(a.Claims), len(a.Models))
	}
	dir := t.TempDir()
	res, err := vahrm.Results(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "main.csv", "sweep_sr.csv", "sweep_pcr.csv", "sweep_beta.csv", "sweep_beta_raw_units.csv", "sweep_first_run.csv", "model_error.csv", "models.csv", "pcr_energy.svg", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("missing or empty %s", f)
		}
	}
}

// Variation-aware placement must not cost energy: on every workload at SR=1
// (no queueing), CGVA-FCFS and VAHRM+IDEAL use no more energy than VU-FCFS.
func TestVariationAwarenessSavesEnergy(t *testing.T) {
	env := vahrmEnv(t, 1000)
	s := vahrm.DefaultSetting()
	for _, w := range vahrm.Workloads() {
		base, err := env.Run(system(t, "VU-FCFS"), w, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, sys := range []string{"CGVA-FCFS", "VAHRM+IDEAL"} {
			r, err := env.Run(system(t, sys), w, s)
			if err != nil {
				t.Fatal(err)
			}
			if r.EnergyJ > base.EnergyJ*(1+1e-9) {
				t.Errorf("workload %d: %s %v J > VU-FCFS %v J", w.ID, sys, r.EnergyJ, base.EnergyJ)
			}
		}
	}
}

// The system of the VAHRM paper (Table II): 540 nodes of 2 CPUs (idle 40 W,
// TDP 120 W) and 4 GPUs (idle 60 W, TDP 300 W), 172.8 kW all idle; a CPU job
// leaves a node's GPUs idle and a GPU job its CPUs.
func TestVAHRMSystemShape(t *testing.T) {
	env, err := vahrm.NewEnvIdeal(builtin.Registries(), 1, 42)
	if err != nil {
		t.Fatal(err)
	}
	truth := env.Truth
	if truth.Nodes() != 540 || truth.Idle()*hw.Watts(truth.Nodes()) != 172800 || truth.TDP() != 2*120+4*300 {
		t.Fatalf("nodes %d, all idle %v W, node TDP %v W", truth.Nodes(), truth.Idle()*hw.Watts(truth.Nodes()), truth.TDP())
	}
	for n := 0; n < truth.Nodes(); n++ {
		for k, gpu := range truth.GPUJob {
			var cpuW, gpuW float64
			for d := 2 * n; d < 2*n+2; d++ {
				cpuW += truth.CPU[d][k]
			}
			for d := 4 * n; d < 4*n+4; d++ {
				gpuW += truth.GPU[d][k]
			}
			w := truth.NodeW(n, k)
			if gpu && w != hw.Watts(gpuW+80) || !gpu && w != hw.Watts(cpuW+240) {
				t.Fatalf("node %d type %d: %v W, want the job's devices plus idle others", n, k, w)
			}
			if w < truth.Idle() || w > truth.TDP() {
				t.Fatalf("node %d type %d: %v W outside idle..TDP", n, k, w)
			}
		}
	}
}
