package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/experiment/cedla"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/solver"
)

// slottedFiles writes a slotted scenario with a job list and a load file
// beside it (relative paths) and returns the scenario's path.
func slottedFiles(t *testing.T, systems, jobs, load string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "name: own\nslotted:\n  nodes: {GTX1060-3GB: 2, RTX2060: 2}\n  slots: 12\n  lookahead: 8\n" +
		"  jobs: {file: jobs.csv}\n  inference: {file: load.csv}\n  systems: " + systems + "\n"
	for name, body := range map[string]string{"s.yaml": doc, "jobs.csv": jobs, "load.csv": load} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.yaml")
}

const (
	slottedJobs = "id,model,arrival_slot,deadline_slot,epochs,priority\n" +
		"a,ResNet152,0,10,0.02,1\nb,VGG19,3,11,0.05,0\nc,InceptionV3,2,8,0.01,2\n"
	slottedLoad = "slot,ResNet152,VGG19,InceptionV3\n0,100,200,50\n1,100,200,50\n2,100,200,50\n3,100,200,50\n4,100,200,50\n5,100,200,50\n" +
		"6,100,200,50\n7,100,200,50\n8,100,200,50\n9,100,200,50\n10,100,200,50\n11,100,200,50\n"
)

// The baselines need no solver: a slotted scenario of them runs in every
// build, from files beside the scenario, and twice gives the same bytes.
func TestRunSlottedBaselines(t *testing.T) {
	cfg := slottedFiles(t, "[FIFO, EPRONS, PA-MBT]", slottedJobs, slottedLoad)
	var first map[string][]byte
	for k := range 2 {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run(t, "run", "-c", cfg, "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		files := map[string][]byte{}
		for _, f := range []string{"summary.json", "runs.csv", "jobs.csv", "timeline.csv", "price.svg", "power.svg", "nodes_on.svg", "report.html"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			files[f] = b
		}
		if k == 0 {
			first = files
			// 3 systems x 3 jobs (file ids kept) and 3 systems x 12 slots.
			if n := strings.Count(string(files["jobs.csv"]), "\n"); n != 1+9 || !strings.Contains(string(files["jobs.csv"]), ",PA-MBT,b,VGG19,3,11,0.05,0,") {
				t.Errorf("jobs.csv: %d lines:\n%s", n, files["jobs.csv"])
			}
			if n := strings.Count(string(files["timeline.csv"]), "\n"); n != 1+36 {
				t.Errorf("timeline.csv: %d lines, want 37", n)
			}
			if !strings.Contains(stdout, "EPRONS") || !strings.Contains(string(files["summary.json"]), `"Training jobs: 3 jobs from jobs.csv"`) {
				t.Errorf("stdout:\n%s", stdout)
			}
			continue
		}
		for f, b := range files {
			if !bytes.Equal(b, first[f]) {
				t.Errorf("%s differs between two runs of the same scenario", f)
			}
		}
	}
}

// Bad input gives one error naming the file, line and column (or the
// field), exit 1, and no output directory.
func TestSlottedBadInputs(t *testing.T) {
	for _, c := range []struct {
		name, systems, jobs, load, want string
	}{
		{"job cell", "[FIFO]", strings.Replace(slottedJobs, "VGG19,3,11", "VGG19,3,x", 1), slottedLoad, `jobs.csv:3: column deadline_slot: "x", want an integer 3..11`},
		{"load cell", "[FIFO]", slottedJobs, strings.Replace(slottedLoad, "4,100,200,50", "4,100,-2,50", 1), `load.csv:6: column VGG19: "-2", want requests/min in 0..1e8`},
		{"cedla arg", "[{name: c, policy: cedla, args: {mode: soft, gap: 0.1}}]", slottedJobs, slottedLoad, "slotted.systems[0] (c): cedla args: yaml: unmarshal errors:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := slottedFiles(t, c.systems, c.jobs, c.load)
			out := filepath.Join(t.TempDir(), "out")
			code, _, errs := run(t, "run", "-c", cfg, "-o", out)
			if code != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory created despite the error")
			}
		})
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.yaml")
	os.WriteFile(cfg, []byte("name: x\nmode: slotted\n"), 0o644)
	if code, _, errs := run(t, "run", "-c", cfg, "-o", filepath.Join(dir, "out")); code != 1 || !strings.Contains(errs, "slotted: missing (mode slotted needs a slotted section)") {
		t.Errorf("missing section: exit %d, %q", code, errs)
	}
	if code, _, errs := run(t, "compare", "-c", "../../examples/slotted-cedla.yaml", "-o", filepath.Join(dir, "out")); code == 0 || !strings.Contains(errs, "has mode slotted; compare replays") {
		t.Errorf("compare of a slotted scenario: exit %d, %q", code, errs)
	}
}

// Scenario-level mistakes found when the inputs are read: each names the
// field or the series, exit 1, nothing written.
func TestSlottedBadScenario(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"unknown node type", "slotted: {nodes: {A100: 2, RTX2060: 1}, jobs: {count: 5}, systems: [FIFO]}\n",
			"slotted.nodes: unknown node type A100 (the models table has GTX1060-3GB, GTX1060-6GB, RTX2060, GTX1080)"},
		{"series too short", "slotted: {slots: 760, lookahead: 24, jobs: {count: 5}, systems: [FIFO]}\n",
			"grid: price_US-NY-NYIS_2024-03.csv: 192 hours, want 196 for 784 slots"},
		{"bad price file", "slotted: {jobs: {count: 5}, systems: [FIFO]}\ngrid: {price: prices.csv}\n",
			`prices.csv:3: column Price (USD/MWh): "abc" is not a finite number`},
		{"missing jobs file", "slotted: {jobs: {file: none.csv}, systems: [FIFO]}\n", "slotted.jobs.file: open "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "s.yaml")
			os.WriteFile(cfg, []byte("name: x\n"+c.doc), 0o644)
			os.WriteFile(filepath.Join(dir, "prices.csv"), []byte("Datetime (UTC),Price (USD/MWh)\n2020-06-01 00:00:00,12\n2020-06-01 01:00:00,abc\n"), 0o644)
			out := filepath.Join(dir, "out")
			code, _, errs := run(t, "run", "-c", cfg, "-o", out)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 1 and one line containing %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory created despite the error")
			}
		})
	}
}

// Without HiGHS, CE-DLA stops the run before any work with how to get it.
func TestSlottedWithoutHiGHS(t *testing.T) {
	if solver.Available() {
		t.Skip("built with HiGHS: the example runs (TestGolden/slotted-cedla)")
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := run(t, "run", "-c", "../../examples/slotted-cedla.yaml", "-o", out)
	if code != 1 || !strings.Contains(errs, "slotted.systems[0] (CE-DLA soft): CE-DLA solves mixed-integer programs with HiGHS, and this wattsched was built without it: build it with 'make build'") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory created despite the error")
	}
}

// A slotted run of at least 100,000 node-slots (here 2 x 4,096 nodes over
// 16 slots: 131,072) says on stderr how far each run has got, a line per
// twentieth of its slots (16 slots: every slot), never in a result file;
// the results are the same bytes with and without the progress hook. The
// example (24 nodes over 96 slots) prints no such line.
func TestSlottedProgress(t *testing.T) {
	dir := t.TempDir()
	var load strings.Builder
	load.WriteString("slot,ResNet152,VGG19,InceptionV3\n")
	for h := range 16 {
		fmt.Fprintf(&load, "%d,100,200,50\n", h)
	}
	doc := "name: big\nslotted:\n  nodes: {GTX1060-3GB: 4096, RTX2060: 4096}\n  slots: 16\n  lookahead: 8\n" +
		"  jobs: {file: jobs.csv}\n  inference: {file: load.csv}\n  systems: [FIFO]\n"
	for name, body := range map[string]string{"s.yaml": doc, "jobs.csv": slottedJobs, "load.csv": load.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "s.yaml")
	out := filepath.Join(dir, "out")
	code, _, stderr := run(t, "run", "-c", cfg, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for h := 1; h <= 16; h++ {
		if line := fmt.Sprintf("  FIFO seed 42: %d of 16 slots\n", h); !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(out, e.Name())); bytes.Contains(b, []byte("of 16 slots")) {
			t.Errorf("%s holds a progress line", e.Name())
		}
	}
	// The runner with and without the hook.
	s, err := scenario.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	results := func(progress func(what string, done, total int, unit string)) map[string][]byte {
		e := env(io.Discard)
		e.RunProgress = progress
		res, err := cedla.RunScenario(context.Background(), e, s)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, r := range res {
			for n, b := range r.Files {
				files[r.Dir+"/"+n] = b
			}
		}
		return files
	}
	calls := 0
	with := results(func(string, int, int, string) { calls++ })
	if calls != 16 {
		t.Errorf("%d progress calls, want 16", calls)
	}
	if diff := cmp.Diff(results(nil), with); diff != "" {
		t.Errorf("results differ with progress (-without +with):\n%s", diff)
	}
	// The example stays quiet.
	if testing.Short() || !solver.Available() {
		return
	}
	code, _, stderr = run(t, "run", "-c", "../../examples/slotted-cedla.yaml", "-o", filepath.Join(dir, "ex"))
	if code != 0 || strings.Contains(stderr, " slots\n") {
		t.Errorf("example: exit %d, stderr:\n%s", code, stderr)
	}
}
