package cli

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"github.com/wattsched/wattsched/solver"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCases are the whole-output golden runs: the README's main job, the
// example scenarios, a compare of the bring-your-own example and the quick
// reproductions. Refactors must leave
// every byte of them unchanged; a deliberate change of results is recorded
// with `go test ./internal/cli -run Golden -update` in its own commit.
var goldenCases = []struct {
	name string
	args []string
}{
	{"demo", []string{"run"}},
	{"replay-openb", []string{"run", "-c", "../../examples/replay-openb.yaml"}},
	{"replay-powerdown", []string{"run", "-c", "../../examples/replay-powerdown.yaml"}},
	{"replay-measured", []string{"run", "-c", "../../examples/replay-measured.yaml"}},
	{"hpc-vahrm", []string{"run", "-c", "../../examples/hpc-vahrm.yaml"}},
	{"elastic-powerflow", []string{"run", "-c", "../../examples/elastic-powerflow.yaml"}},
	{"vahrm-quick", []string{"reproduce", "vahrm", "--quick"}},
	{"powerflow-quick", []string{"reproduce", "powerflow", "--quick"}},
	{"coloc-eaco", []string{"run", "-c", "../../examples/coloc-eaco.yaml"}},
	{"eaco-quick", []string{"reproduce", "eaco", "--quick"}},
	{"cedla-quick", []string{"reproduce", "cedla", "--quick"}},
	{"slotted-cedla", []string{"run", "-c", "../../examples/slotted-cedla.yaml"}},
	{"byo-replay", []string{"run", "-c", "../../examples/byo-replay.yaml"}},
	{"byo-compare", []string{"compare", "-c", "../../examples/byo-replay.yaml", "--seeds", "3"}},
}

// needsHiGHS are the golden cases that solve CE-DLA's programs.
var needsHiGHS = []string{"cedla-quick", "slotted-cedla"}

// goldenVerbatimMax is the size under which a text result is kept verbatim
// beside the manifest, so that a change shows as a readable diff; larger
// files and plots are checked by their SHA-256 in the manifest only.
const goldenVerbatimMax = 64 << 10

// TestGolden runs each golden case and compares every result file and the
// printed output with testdata/golden/<case>: MANIFEST lists each file's
// SHA-256 and size, and small text files are kept verbatim.
func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs")
	}
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(needsHiGHS, c.name) && !solver.Available() {
				t.Skip("built without HiGHS (build tag highs): make test runs this case")
			}
			dir := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := run(t, append(c.args, "-o", dir)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			files := map[string][]byte{"stdout.txt": []byte(strings.ReplaceAll(stdout, dir, "OUT"))}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[e.Name()] = b
			}
			claimsCanFail(t, files["summary.json"])
			want := filepath.Join("testdata", "golden", c.name)
			if *update {
				writeGolden(t, want, files)
				return
			}
			checkGolden(t, want, files)
		})
	}
}

func manifest(files map[string][]byte) string {
	var b strings.Builder
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%x %8d %s\n", sha256.Sum256(files[n]), len(files[n]), n)
	}
	return b.String()
}

func verbatim(name string, b []byte) bool {
	switch filepath.Ext(name) {
	case ".csv", ".json", ".txt":
		return len(b) <= goldenVerbatimMax
	}
	return false
}

func writeGolden(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"MANIFEST": []byte(manifest(files))}
	for n, b := range files {
		if verbatim(n, b) {
			out[n] = b
		}
	}
	for n, b := range out {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkGolden(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	diff := cmp.Diff(string(want), manifest(files))
	if diff == "" {
		return
	}
	t.Errorf("results differ from %s (-want +got):\n%s", dir, diff)
	for n, b := range files {
		w, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || bytes.Equal(w, b) {
			continue
		}
		d := cmp.Diff(strings.Split(string(w), "\n"), strings.Split(string(b), "\n"))
		if len(d) > 4000 {
			d = d[:4000] + "\n..."
		}
		t.Errorf("%s (-want +got):\n%s", n, d)
	}
}
