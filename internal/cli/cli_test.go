package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/policy/builtin"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// The same scenario and seeds give byte-identical result files.
func TestRunIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("full-trace runs")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte(`name: det
trace: {pods: default}
seeds: 2
policies:
  - name: FGD
    scorers: [{policy: fgd, weight: 1000}]
  - name: "0.1*PWR+0.9*FGD"
    scorers: [{policy: pwr, weight: 100}, {policy: fgd, weight: 900}]
`), 0o644)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, o := range []string{a, b} {
		if code, _, errs := run(t, "run", "-c", scen, "-o", o); code != 0 {
			t.Fatalf("run exited %d: %s", code, errs)
		}
	}
	ents, _ := os.ReadDir(a)
	if len(ents) < 6 {
		t.Fatalf("only %d result files", len(ents))
	}
	for _, e := range ents {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", e.Name())
		}
	}
}

func TestMalformedPodListGivesOneClearError(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.csv")
	os.WriteFile(pods, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1,1,500\np1,abc,1,1,500\n"), 0o644)
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte("name: bad\ntrace: {pods: "+pods+"}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, errs := run(t, "run", "-c", scen, "-o", out)
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	want := pods + `:3: column cpu_milli: "abc" is not an integer`
	if !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("stderr = %q, want one line containing %q", errs, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory created despite the error")
	}
}

func TestUsageErrors(t *testing.T) {
	if code, _, _ := run(t); code != 2 {
		t.Errorf("no args: exit %d, want 2", code)
	}
	if code, _, errs := run(t, "run"); code != 2 || !strings.Contains(errs, "-o DIR is required") {
		t.Errorf("run without -o: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "reproduce", "pwr", "-o", t.TempDir(), "--trace", "nope"); code != 2 || !strings.Contains(errs, "unknown trace \"nope\"") {
		t.Errorf("unknown trace: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errs)
	}
}

func TestRegistryHasEveryPolicyOnce(t *testing.T) {
	r := builtin.Registries()
	for _, c := range []struct{ family, got, want string }{
		{"scorers", strings.Join(r.Scorers.Names(), ","), "fgd,pwr,energy,bestfit,dotprod,gpupacking,gpuclustering"},
		{"hpc", strings.Join(r.HPC.Names(), ","), "fcfs,vahrm"},
		{"elastic", strings.Join(r.Elastic.Names(), ","), "powerflow,gandiva,tiresias,afs,zeus"},
		{"slotted", strings.Join(r.Slotted.Names(), ","), "cedla,fifo,eprons,pambt"},
	} {
		if c.got != c.want {
			t.Errorf("%s registry = %s, want %s", c.family, c.got, c.want)
		}
	}
	if _, err := r.Scorers.New("fgd", []byte("popularity_threshold: 0\n"), policyDeps(t)); err == nil || !strings.Contains(err.Error(), "fgd.popularity_threshold") {
		t.Errorf("bad fgd args: %v", err)
	}
	if _, err := r.Scorers.New("fgd", []byte("bogus: 1\n"), policyDeps(t)); err == nil {
		t.Error("unknown fgd arg accepted")
	}
}

func TestRunReplayScenario(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.csv")
	os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,T4\nn1,32000,65536,2,T4\n"), 0o644)
	pods := filepath.Join(dir, "pods.csv")
	os.WriteFile(pods, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"+
		"p0,4000,1024,2,1000,,LS,Running,0,100,0\n"+
		"p1,4000,1024,2,1000,,LS,Running,10,50,10\n"+
		"p2,4000,1024,2,1000,,LS,Running,20,30,20\n"), 0o644)
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte("name: rp\nmode: replay\ntrace: {pods: "+pods+", nodes: "+nodes+"}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"), 0o644)
	out := filepath.Join(dir, "out")
	if code, _, errs := run(t, "run", "-c", scen, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	jobs, _ := os.ReadFile(filepath.Join(out, "jobs.csv"))
	// p0 and p1 take both nodes' GPUs; p2 waits until p1 ends at 50 s and runs 10 s.
	want := "FGD,2,p2,20.000,50.000,60.000,30.000,"
	if !strings.Contains(string(jobs), want) {
		t.Fatalf("jobs.csv =\n%s\nwant a row starting %q", jobs, want)
	}
	for _, f := range []string{"summary.json", "timeline.csv", "power.svg", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
}

// An hpc scenario on a user's SWF file: results written, byte-identical on
// a second run; a malformed SWF file gives one error naming file, line and
// column, and no results directory.
func TestRunHPCScenario(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	log.WriteString("; Version: 2.2\n; MaxNodes: 64\n")
	for i := 0; i < 120; i++ {
		// every 60 s a job of 30..1000 s on 8..64 processors (4 per node)
		fmt.Fprintf(&log, "%d %d -1 %d %d -1 -1 %d -1 -1 1 1 1 -1 -1 -1 -1 -1\n", i+1, 60*i, 30+(i*37)%970, 8+(i*13)%57, 8+(i*13)%57)
	}
	swfPath := filepath.Join(dir, "site.swf")
	os.WriteFile(swfPath, []byte(log.String()), 0o644)
	scen := filepath.Join(dir, "s.yaml")
	os.WriteFile(scen, []byte("name: site\npower_limit: {tdp_fraction: 0.6}\nhpc:\n  swf: "+swfPath+"\n  procs_per_node: 4\n  sr: 20\n  workloads: [1, 7]\n  systems: [VU-FCFS, CGVA-FCFS-B, VAHRM+TSMVA]\n"), 0o644)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, o := range []string{a, b} {
		code, out, errs := run(t, "run", "-c", scen, "-o", o)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "SWF log site.swf; the first 120 jobs") || !strings.Contains(out, "VAHRM+TSMVA") {
			t.Fatalf("stdout lacks the log or a system:\n%s", out)
		}
	}
	for _, f := range []string{"summary.json", "runs.csv", "energy_by_workload.svg", "report.html"} {
		x, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatalf("missing %s", f)
		}
		if y, _ := os.ReadFile(filepath.Join(b, f)); !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", f)
		}
	}
	runs, _ := os.ReadFile(filepath.Join(a, "runs.csv"))
	if n := strings.Count(string(runs), "\n"); n != 1+2*3 {
		t.Errorf("runs.csv has %d lines, want a header and 2 workloads x 3 systems", n)
	}

	os.WriteFile(swfPath, []byte("; Version: 2.2\n1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 -1 1x 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"), 0o644)
	out := filepath.Join(dir, "c")
	code, _, errs := run(t, "run", "-c", scen, "-o", out)
	want := swfPath + `:3: column run_time: "1x" is not an integer`
	if code != 1 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want 1 and one line containing %q", code, errs, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory created despite the error")
	}
}

func TestMalformedPAITableGivesOneClearError(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "pai_job_table.csv")
	tasks := filepath.Join(dir, "pai_task_table.csv")
	os.WriteFile(jobs, []byte("j1,i1,u1,Terminated,100,200\nj2,i2,u1,Terminated,1x0,300\n"), 0o644)
	os.WriteFile(tasks, []byte("j1,worker,1,Terminated,100,200,600,29.3,100,V100\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, errs := run(t, "reproduce", "powerflow", "-o", out, "--pai-jobs", jobs, "--pai-tasks", tasks)
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	want := jobs + `:2: column start_time: "1x0" is not a number`
	if !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("stderr = %q, want one line containing %q", errs, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory created despite the error")
	}
	if code, _, errs := run(t, "reproduce", "powerflow", "-o", out, "--pai-jobs", jobs); code != 2 || !strings.Contains(errs, "go together") {
		t.Errorf("--pai-jobs alone: exit %d, %q", code, errs)
	}
}

func TestPhillyTableFlags(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "philly.csv")
	os.WriteFile(table, []byte("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-13 01:00:00,600,2,1200,c1\n2017-10-13 02:00:00,60,x,60,c1\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, errs := run(t, "reproduce", "powerflow", "-o", out, "--philly", table)
	if want := table + `:3: column num_gpus: "x" is not an integer in [1, 4096]`; code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q, want 1 and %q", code, errs, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory created despite the error")
	}
	// A non-finite duration is refused before any run (it used to run for
	// 20 s and then fail in JSON encoding).
	os.WriteFile(table, []byte("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-13 01:00:00,NaN,2,1200,c1\n"), 0o644)
	code, _, errs = run(t, "reproduce", "powerflow", "-o", out, "--philly", table)
	if want := table + `:2: column duration:`; code != 1 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q, want 1 and %q", code, errs, want)
	}
	for _, args := range [][]string{
		{"--start", "2017-10-13 00:00:00"},
		{"--philly", table, "--pai-jobs", table, "--pai-tasks", table},
		{"--philly", table, "--hours", "0"},
	} {
		if code, _, _ := run(t, append([]string{"reproduce", "powerflow", "-o", out}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// --help on every subcommand exits 0 and prints its flags; --version and
// version print the version; completion prints a bash script; an unknown
// flag still exits 2.
func TestHelpVersionCompletion(t *testing.T) {
	cases := [][]string{{"run", "--help"}, {"bench", "-h"}, {"help"}, {"--help"}}
	for _, st := range studies() {
		cases = append(cases, []string{"reproduce", st.Name(), "--help"})
	}
	for _, args := range cases {
		code, out, errs := run(t, args...)
		if code != 0 || !strings.Contains(out+errs, "-") {
			t.Errorf("%v: exit %d, output %q", args, code, out+errs)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, _ := run(t, args...); code != 0 || !strings.HasPrefix(out, "wattsched "+Version) {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	code, out, _ := run(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "complete -o default -F __start_wattsched wattsched") {
		t.Fatalf("completion: exit %d", code)
	}
	if code, _, _ := run(t, "completion", "tcsh"); code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
	if code, _, _ := run(t, "run", "--no-such-flag"); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
}

// Bring your own hardware: the example's H100/L40S cluster runs with the
// embedded H100 and the L40S model of its hardware section; without that
// section the error names the model and says how to add it; a --catalog
// file adds models too; --catalog in a mode that does not read node lists
// is a usage error.
func TestBringYourOwnHardware(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if code, _, errs := run(t, "run", "-c", filepath.Join("..", "..", "examples", "byo-hardware.yaml"), "-o", out, "--seeds", "1"); code != 0 {
		t.Fatalf("example: exit %d: %s", code, errs)
	}
	nodes, _ := filepath.Abs(filepath.Join("..", "..", "examples", "data", "h100-l40s-nodes.csv"))
	bare := filepath.Join(dir, "bare.yaml")
	os.WriteFile(bare, []byte("name: bare\nmode: inflation\nseeds: 1\ntarget: 0.5\ntrace: {nodes: "+nodes+", pods: default}\npolicies:\n  - {name: PWR, scorers: [{policy: pwr, weight: 1}]}\n"), 0o644)
	code, _, errs := run(t, "run", "-c", bare, "-o", filepath.Join(dir, "o2"))
	if code != 1 || !strings.Contains(errs, `unknown GPU model "L40S-context-linear"`) || !strings.Contains(errs, "--catalog file") {
		t.Fatalf("exit %d, stderr %q: want 1, the model and how to add it", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "o2")); !os.IsNotExist(err) {
		t.Error("results directory written despite the error")
	}
	cat := filepath.Join(dir, "cat.yaml")
	os.WriteFile(cat, []byte("gpus:\n  - {name: L40S-context-linear, idle_w: 35.6, tdp_w: 350, memory_gib: 48, source: test}\n"), 0o644)
	if code, _, errs := run(t, "run", "-c", bare, "-o", filepath.Join(dir, "o3"), "--catalog", cat); code != 0 {
		t.Fatalf("--catalog: exit %d: %s", code, errs)
	}
	if code, _, _ := run(t, "run", "-c", filepath.Join("..", "..", "examples", "hpc-vahrm.yaml"), "-o", filepath.Join(dir, "o4"), "--catalog", cat); code != 2 {
		t.Errorf("--catalog with an hpc scenario: exit %d, want 2", code)
	}
}

// compare on a user-made cluster and trace: every policy on every seed,
// means with 95% intervals, distributions, a summary sentence at the top;
// two runs give the same bytes; a scenario that is not a replay, or no -c,
// is a usage error and nothing is written.
func TestCompareOwnTrace(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\n"
	for i := 0; i < 6; i++ {
		nodes += fmt.Sprintf("n%d,32000,131072,2,%s\n", i, []string{"T4", "V100M16", "A100"}[i%3])
	}
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	for i := 0; i < 60; i++ {
		pods += fmt.Sprintf("p%d,%d,1024,1,%d,,LS,Running,%d,%d,\n", i, 1000+(i%4)*1000, []int{250, 500, 1000}[i%3], i*300, i*300+3600+(i%7)*900)
	}
	os.WriteFile(filepath.Join(dir, "nodes.csv"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "pods.csv"), []byte(pods), 0o644)
	sc := filepath.Join(dir, "mine.yaml")
	os.WriteFile(sc, []byte(`name: mine
mode: replay
seeds: 4
trace: {nodes: nodes.csv, pods: pods.csv}
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
  - {name: BestFit, scorers: [{policy: bestfit, weight: 1000}]}
`), 0o644)
	outs := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	var stdout string
	for _, o := range outs {
		code, out, errs := run(t, "compare", "-c", sc, "-o", o)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		stdout = out
	}
	if !strings.HasPrefix(stdout, "On 6 nodes with 12 GPUs, replaying 60 tasks") || !strings.Contains(stdout, "95% confidence interval") {
		t.Errorf("summary or intervals missing:\n%s", stdout)
	}
	for _, f := range []string{"summary.json", "runs.csv", "wait_cdf.svg", "power.svg", "report.html"} {
		a, err1 := os.ReadFile(filepath.Join(outs[0], f))
		b, err2 := os.ReadFile(filepath.Join(outs[1], f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%v %v)", f, err1, err2)
		}
	}
	runsCSV, _ := os.ReadFile(filepath.Join(outs[0], "runs.csv"))
	// 3 policies x 4 seeds, and the first policy under the automatic
	// power-down variant on 4 seeds.
	if n := strings.Count(string(runsCSV), "\n"); n != 1+3*4+4 {
		t.Errorf("runs.csv has %d lines, want a header and 16 runs", n)
	}
	html, _ := os.ReadFile(filepath.Join(outs[0], "report.html"))
	if i, j := bytes.Index(html, []byte("On 6 nodes")), bytes.Index(html, []byte("<table")); i < 0 || i > j {
		t.Error("report.html does not open with the summary")
	}
	if code, _, _ := run(t, "compare", "-c", filepath.Join("..", "..", "examples", "hpc-vahrm.yaml"), "-o", filepath.Join(dir, "c")); code != 2 {
		t.Errorf("hpc scenario: exit %d, want 2", code)
	}
	if code, _, _ := run(t, "compare", "-o", filepath.Join(dir, "d")); code != 2 {
		t.Errorf("no -c: exit %d, want 2", code)
	}
	for _, d := range []string{"c", "d"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !os.IsNotExist(err) {
			t.Errorf("%s written despite the error", d)
		}
	}
}

// Money and carbon: a replay is charged hour by hour with the scenario's
// grid (default: NYISO 2023); the same energy in a dearer month costs
// more; an unknown region or a start outside the series is an error before
// any run. Inflation prices a year at each load level's power, from any
// start (the series repeated past its end); mode coloc uses the scenario's
// grid.
func TestReplayCostAndCarbon(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,T4\nn1,32000,131072,2,A100\n"
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,2000,1024,1,1000,,LS,Running,0,36000,\np1,2000,1024,1,500,,LS,Running,1800,9000,\n"
	os.WriteFile(filepath.Join(dir, "nodes.csv"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "pods.csv"), []byte(pods), 0o644)
	cost := func(grid string) (float64, float64, int, string) {
		sc := filepath.Join(dir, "s.yaml")
		os.WriteFile(sc, []byte("name: s\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\n"+grid+"policies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
		out := filepath.Join(dir, "o")
		code, _, errs := run(t, "run", "-c", sc, "-o", out, "--force")
		if code != 0 {
			return 0, 0, code, errs
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		var sum struct {
			Policies []struct {
				EnergyKWh float64 `json:"energy_kwh"`
				CostUSD   float64 `json:"cost_usd"`
				CO2Kg     float64 `json:"co2_kg"`
			} `json:"policies"`
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		p := sum.Policies[0]
		if !(p.CostUSD > 0 && p.CO2Kg > 0 && p.EnergyKWh > 0) {
			t.Fatalf("%s: %+v", grid, p)
		}
		return p.CostUSD, p.CO2Kg, 0, ""
	}
	jan, janCO2, _, _ := cost("")
	if usd, kg, _, _ := cost("grid: {pue: 1.5}\n"); math.Abs(usd-1.5*jan) > 1e-6*jan || math.Abs(kg-1.5*janCO2) > 1e-6*janCO2 {
		t.Errorf("PUE 1.5: %v USD %v kg, want 1.5 x %v, %v", usd, kg, jan, janCO2)
	}
	aug, _, _, _ := cost("grid: {start: \"2023-08-01 12:00:00\"}\n")
	de, _, _, _ := cost("grid: {region: DE-LU, start: \"2023-08-01 12:00:00\"}\n")
	if jan == aug || aug == de {
		t.Errorf("the same energy cost the same at other hours or regions: %v %v %v", jan, aug, de)
	}
	for _, bad := range []string{"grid: {region: MARS}\n", "grid: {start: \"2031-01-01 00:00:00\"}\n", "grid: {carbon_basis: scope3}\n", "grid: {pue: 0.5}\n"} {
		if _, _, code, errs := cost(bad); code != 1 || !strings.Contains(errs, "grid") {
			t.Errorf("%q: exit %d, %q", bad, code, errs)
		}
	}

	// Inflation prices a year at each load level's power: the EOPC times
	// the sum of the series' 8,760 hourly values (W x h = 1e-6 MWh), x PUE.
	infl := func(grid string) (float64, float64, float64, int, string) {
		sc := filepath.Join(dir, "infl.yaml")
		os.WriteFile(sc, []byte("name: i\nmode: inflation\nseeds: 1\ntarget: 0.5\ntrace: {pods: default}\n"+grid+"policies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
		out := filepath.Join(dir, "i")
		code, stdout, errs := run(t, "run", "-c", sc, "-o", out, "--force")
		if code != 0 {
			return 0, 0, 0, code, errs
		}
		if !strings.Contains(stdout, "USD/yr @0.5") || !strings.Contains(stdout, "money and carbon of a year") {
			t.Errorf("inflation output without its money table and note:\n%s", stdout)
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		var sum struct {
			Policies []struct {
				EOPC float64 `json:"eopc_w_at_0.50"`
				USD  float64 `json:"cost_usd_per_year_at_0.50"`
				Kg   float64 `json:"co2_kg_per_year_at_0.50"`
			} `json:"policies"`
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		p := sum.Policies[0]
		// capacity.csv prices every load level the same way (six digits).
		c, _ := os.ReadFile(filepath.Join(out, "capacity.csv"))
		rows, err := csv.NewReader(bytes.NewReader(c)).ReadAll()
		if err != nil || len(rows) < 2 || rows[0][len(rows[0])-2] != "cost_usd_per_year" {
			t.Fatalf("capacity.csv: %v, header %v", err, rows[0])
		}
		for _, row := range rows[1:] {
			if row[1] != "0.50" {
				continue
			}
			usd, _ := strconv.ParseFloat(row[len(row)-2], 64)
			kg, _ := strconv.ParseFloat(row[len(row)-1], 64)
			if math.Abs(usd-p.USD) > 1e-5*p.USD || math.Abs(kg-p.Kg) > 1e-5*p.Kg { // the CSV's six digits
				t.Errorf("capacity.csv at 0.50: %v USD %v kg; summary.json %v, %v", usd, kg, p.USD, p.Kg)
			}
		}
		return p.EOPC, p.USD, p.Kg, 0, ""
	}
	total := func(region, kind, basis string) float64 {
		s, err := elgrid.Embedded(region, kind, basis)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, v := range s.Values[:8760] {
			sum += v
		}
		return sum
	}
	for _, c := range []struct {
		grid, region string
		pue          float64
	}{{"", "US-NY-NYIS", 1}, {"grid: {region: DE-LU, pue: 1.2}\n", "DE-LU", 1.2}} {
		w, usd, kg, code, errs := infl(c.grid)
		if code != 0 {
			t.Fatalf("inflation %q: exit %d: %s", c.grid, code, errs)
		}
		wantUSD, wantKg := w*1e-6*total(c.region, "price", "")*c.pue, w*1e-6*total(c.region, "carbon", "lca")*c.pue
		if !(w > 0) || math.Abs(usd-wantUSD) > 1e-9*wantUSD || math.Abs(kg-wantKg) > 1e-9*wantKg {
			t.Errorf("inflation %q: EOPC %v W priced %v USD, %v kg a year; want %v USD, %v kg", c.grid, w, usd, kg, wantUSD, wantKg)
		}
	}
	// Mode coloc charges its runs with the scenario's grid: PUE 1.2 costs
	// 1.2 times as much, another region differs.
	jobs, _ := filepath.Abs(filepath.Join("..", "..", "examples", "data", "coloc-jobs.trace"))
	coloc := func(grid string) float64 {
		sc := filepath.Join(dir, "coloc.yaml")
		os.WriteFile(sc, []byte("name: c\nseeds: 1\ncoloc: {jobs: "+jobs+", nodes: 1, systems: [FIFO]}\n"+grid), 0o644)
		out := filepath.Join(dir, "c")
		if code, _, errs := run(t, "run", "-c", sc, "-o", out, "--force"); code != 0 {
			t.Fatalf("coloc %q: exit %d: %s", grid, code, errs)
		}
		var sum struct {
			Systems []struct {
				USD [2]float64 `json:"cost_usd_mean_std"`
			} `json:"systems"`
		}
		b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil || len(sum.Systems) != 1 || !(sum.Systems[0].USD[0] > 0) {
			t.Fatalf("coloc %q: summary %+v, %v", grid, sum, err)
		}
		return sum.Systems[0].USD[0]
	}
	ny, pue, de := coloc(""), coloc("grid: {pue: 1.2}\n"), coloc("grid: {region: DE-LU}\n")
	if math.Abs(pue-1.2*ny) > 1e-9*ny || de == ny {
		t.Errorf("coloc cost: NYISO %v, with PUE 1.2 %v, DE-LU %v; want 1.2 x NYISO and a different DE-LU", ny, pue, de)
	}

	// A year from another start takes the one-year series' hours past its
	// end from its start again: every hour once, the same total.
	w0, usd0, _, _, _ := infl("")
	if w, usd, _, code, errs := infl("grid: {start: \"2023-06-01 00:00:00\"}\n"); code != 0 || w != w0 || math.Abs(usd-usd0) > 1e-9*usd0 {
		t.Errorf("inflation from June: exit %d (%s), %v W %v USD; want %v USD as from January", code, errs, w, usd, usd0)
	}
}

// SIGINT in the middle of a run stops it with exit 130 and one line; the
// earlier results in the output directory are untouched and nothing
// temporary is left beside them. (The child is this test binary.)
func TestInterruptKeepsOldResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reproduction in a child process")
	}
	if os.Getenv("WATTSCHED_SIGNAL_CHILD") != "" {
		HandleSignals(os.Stderr)
		os.Exit(Run(context.Background(), []string{"reproduce", "powerflow", "-o", os.Getenv("WATTSCHED_SIGNAL_CHILD"), "--force"}, io.Discard, os.Stderr))
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if code, _, errs := run(t, "reproduce", "vahrm", "--quick", "-o", out); code != 0 {
		t.Fatalf("first run: %d %s", code, errs)
	}
	before, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	// Every terminating signal is handled as SIGINT (issue 40: SIGHUP and
	// SIGQUIT left the temporary directory and the claim).
	for _, sig := range TerminatingSignals {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestInterruptKeepsOldResults$")
		cmd.Env = append(os.Environ(), "WATTSCHED_SIGNAL_CHILD="+out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "no partial results were written") {
			t.Fatalf("%v: child: %v, stderr %q; want exit 130 and one line", sig, err, stderr.String())
		}
		after, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		if !bytes.Equal(before, after) {
			t.Errorf("%v: the earlier results changed", sig)
		}
		ents, _ := os.ReadDir(parent)
		if len(ents) != 1 {
			t.Errorf("%v: %d entries beside the results, want none", sig, len(ents)-1)
		}
	}
}

// The line a signal prints is true: a result published whole before the
// signal is named as complete.
func TestStoppedLine(t *testing.T) {
	if got, want := stoppedLine(syscall.SIGTERM, nil), "wattsched: terminated: stopped; no partial results were written"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := stoppedLine(syscall.SIGHUP, []string{"out"}), "wattsched: hangup: stopped; the results in out are complete, nothing partial was written"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Inputs that used to give NaN tables or silent results are errors before
// any run: a header-only node list, a cluster without GPUs in inflation, a
// replay of a pod list without times, a bare name that is no embedded
// trace (a local file must be given as a path).
func TestDegenerateInputs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "empty.csv"), []byte("sn,cpu_milli,memory_mib,gpu,model\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "cpu.csv"), []byte("sn,cpu_milli,memory_mib,gpu,model\nc0,32000,1024,0,\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "nodes.csv"), []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,T4\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "five.csv"), []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n"), 0o644)
	pol := "policies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"
	for _, c := range []struct{ yaml, want string }{
		{"mode: inflation\ntrace: {nodes: empty.csv, pods: default}\n", "lists no nodes"},
		{"mode: inflation\ntrace: {nodes: cpu.csv, pods: default}\n", "has no GPUs"},
		{"mode: replay\ntrace: {nodes: nodes.csv, pods: five.csv}\n", "no creation and deletion times"},
		{"mode: inflation\ntrace: {nodes: nodes.csv, pods: mypods}\n", "a file path needs a directory or an extension"},
		{"mode: hpc\nhpc: {swf: nasa-ipsc, jobs: 50, workloads: [0], systems: [VU-FCFS]}\npower_limit: {watts: 60000}\n", "above the cap of 60000 W: no job can ever run"},
		{"mode: hpc\nhpc: {swf: nasa-ipsc, jobs: 50, workloads: [0], systems: [VU-FCFS]}\npower_limit: {watts: 175000}\n", "it can never run"},
	} {
		sc := filepath.Join(dir, "s.yaml")
		body := "name: s\n" + c.yaml
		if !strings.Contains(c.yaml, "mode: hpc") {
			body += pol
		}
		os.WriteFile(sc, []byte(body), 0o644)
		out := filepath.Join(dir, "out")
		code, _, errs := run(t, "run", "-c", sc, "-o", out)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %q; want 1 and %q", c.yaml, code, errs, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%q: output written", c.yaml)
		}
	}
}

// import k8s turns a kubectl dump into a scenario directory that runs.
func TestImportK8s(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.json")
	var items []string
	items = append(items, `{"kind": "Node", "metadata": {"name": "gpu-0", "labels": {"nvidia.com/gpu.product": "Tesla-T4"}}, "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"}}}`,
		`{"kind": "Node", "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}, "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "8"}}}`)
	for i := 0; i < 30; i++ {
		ann := ""
		req := `"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"`
		if i%2 == 0 {
			ann = `, "annotations": {"wattsched.io/gpu-milli": "300"}`
			req = `"cpu": "500m", "memory": "1Gi"`
		}
		items = append(items, fmt.Sprintf(`{"kind": "Pod", "metadata": {"name": "p%d", "namespace": "ml", "creationTimestamp": "2026-11-20T10:%02d:00Z"%s}, "spec": {"containers": [{"resources": {"requests": {%s}}}]}, "status": {"phase": "Running"}}`, i, i, ann, req))
	}
	os.WriteFile(in, []byte(`{"kind": "List", "items": [`+strings.Join(items, ",")+`]}`), 0o644)
	out := filepath.Join(dir, "imp")
	if code, stdout, errs := run(t, "import", "k8s", "-f", in, "-o", out); code != 0 || !strings.Contains(stdout, "2 nodes and 30 pods") {
		t.Fatalf("import: exit %d %q %s", code, stdout, errs)
	}
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "scenario.yaml"), "-o", filepath.Join(dir, "res"), "--seeds", "1"); code != 0 {
		t.Fatalf("running the imported scenario: exit %d: %s", code, errs)
	}
	// The job speed stub names the cluster's first GPU model as an example
	// reference; uncommented in mode replay, that reference needs a speed
	// for every GPU model of the cluster (the T4 has none in the catalog).
	sc, err := os.ReadFile(filepath.Join(out, "scenario.yaml"))
	const stub = "#   trace: {nodes: nodes.csv, pods: pods.csv, reference_gpu: Tesla-T4}\n"
	if err != nil || !strings.Contains(string(sc), stub) {
		t.Fatalf("imported scenario lacks the reference_gpu stub %q:\n%s", stub, sc)
	}
	replay := strings.NewReplacer("mode: inflation", "mode: replay", "trace: {nodes: nodes.csv, pods: pods.csv}\n", "", stub, stub[4:]).Replace(string(sc))
	if err := os.WriteFile(filepath.Join(out, "replay.yaml"), []byte(replay), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "replay.yaml"), "-o", filepath.Join(dir, "res-replay")); code != 1 || !strings.Contains(errs, "GPU model T4 has no training speed") {
		t.Errorf("imported scenario with the reference uncommented: exit %d, want 1 naming the T4's missing speed: %s", code, errs)
	}
	if code, _, errs := run(t, "import", "k8s", "-f", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "x")); code != 1 || !strings.Contains(errs, "missing.json") {
		t.Errorf("missing dump: exit %d %q", code, errs)
	}
	if code, _, _ := run(t, "import", "slurm", "-f", in, "-o", filepath.Join(dir, "y")); code != 2 {
		t.Errorf("import slurm: exit %d, want 2", code)
	}
	for _, args := range [][]string{{"-o", filepath.Join(dir, "z")}, {"-f", in, "--kubeconfig", in, "-o", filepath.Join(dir, "z")}, {"-f", in, "--context", "x", "-o", filepath.Join(dir, "z")}} {
		if code, _, _ := run(t, append([]string{"import", "k8s"}, args...)...); code != 2 {
			t.Errorf("import k8s %v: exit %d, want 2", args, code)
		}
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte("current-context: nope\ncontexts: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "import", "k8s", "--kubeconfig", kc, "-o", filepath.Join(dir, "z")); code != 1 || !strings.Contains(errs, `no context "nope"`) {
		t.Errorf("bad kubeconfig: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "z")); !os.IsNotExist(err) {
		t.Errorf("a failed import left %s behind (%v)", filepath.Join(dir, "z"), err)
	}
}

// Completion offers every flag each subcommand's --help lists (cobra's
// scripts ask `wattsched __complete` for the words).
func TestCompletionOffersEveryFlag(t *testing.T) {
	flagRE := regexp.MustCompile(`(?m)^  (?:-[a-z], )?-(-?[a-z0-9-]+)`)
	for _, cmd := range [][]string{{"run"}, {"compare"}, {"merge"}, {"bench"}, {"calibrate"}, {"import", "k8s"}, {"reproduce", "pwr"}, {"reproduce", "cedla"}} {
		code, help, _ := run(t, append(cmd, "--help")...)
		if code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		flags := flagRE.FindAllStringSubmatch(help, -1)
		if len(flags) == 0 {
			t.Errorf("%s --help lists no flags: %q", cmd, help)
		}
		// A one-letter flag completes after "-", the others after "--".
		_, one, _ := run(t, append(append([]string{"__complete"}, cmd...), "-")...)
		_, long, _ := run(t, append(append([]string{"__complete"}, cmd...), "--")...)
		var words []string
		for _, l := range strings.Split(one+long, "\n") {
			w, _, _ := strings.Cut(l, "\t")
			words = append(words, w)
		}
		for _, f := range flags {
			want := "-" + f[1]
			if !slices.Contains(words, want) {
				t.Errorf("%s: completion lacks %s (offers %v)", cmd, want, words)
			}
		}
	}
}
