package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// orderNodes is a mixed cluster (H100 x8, L40S x4, CPU-only) as node-list
// rows; the names are not in row order, so that sorting by name moves them.
func orderNodes() []string {
	var rows []string
	for i := range 6 {
		rows = append(rows, fmt.Sprintf("zeta-h100-%d,224000,2097152,8,NVIDIA-H100-80GB-HBM3", i))
	}
	for i := range 5 {
		rows = append(rows, fmt.Sprintf("alpha-l40s-%d,96000,786432,4,L40S", i))
	}
	for i := range 2 {
		rows = append(rows, fmt.Sprintf("mid-cpu-%d,64000,262144,0,", i))
	}
	return rows
}

// orderScenario is the scenario of one mode over the mixed cluster and
// the first pods of the bring-your-own example.
func orderScenario(mode string) string {
	s := "name: order\nmode: " + mode + "\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\n"
	if mode == "replay" {
		s += "  reference_gpu: H100\npower_down: {idle_after_s: 600, wake_s: 120, off_w: 10}\n"
	} else {
		s += "target: 0.9\nseeds: 2\n"
	}
	return s + `policies:
  - name: FGD
    scorers: [{policy: fgd, weight: 1000}]
  - name: PWR
    scorers: [{policy: pwr, weight: 1000}]
  - name: BestFit
    scorers: [{policy: bestfit, weight: 1000}]
`
}

// runOrdered writes the scenario with the node rows in the given order,
// runs the command and returns every result file and the printed output.
func runOrdered(t *testing.T, args []string, scen string, rows, pods []string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\n" + strings.Join(rows, "\n") + "\n"
	for name, body := range map[string]string{"nodes.csv": nodes, "pods.csv": strings.Join(pods, "\n") + "\n", "s.yaml": scen} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := run(t, append(args, "-c", filepath.Join(dir, "s.yaml"), "-o", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files := map[string]string{"stdout": strings.ReplaceAll(stdout, dir, "DIR")}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = strings.ReplaceAll(string(b), dir, "DIR")
	}
	return files
}

// TestNodeOrderInvariance is the property that no result depends on the
// order of the node list's rows: replay with power-down (run and compare)
// and inflation, each with the rows H100 first, L40S first and in seeded
// random orders, give byte-identical result files.
func TestNodeOrderInvariance(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs")
	}
	b, err := os.ReadFile("../../examples/data/byo-pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	pods := strings.Split(strings.TrimSpace(string(b)), "\n")[:301] // the header and 300 pods
	base := orderNodes()
	var l40sFirst []string
	l40sFirst = append(l40sFirst, base[6:11]...)
	l40sFirst = append(l40sFirst, base[:6]...)
	l40sFirst = append(l40sFirst, base[11:]...)
	orders := map[string][]string{"l40s-first": l40sFirst}
	for seed := range uint64(2) {
		rows := append([]string{}, base...)
		rand.New(rand.NewPCG(seed, 7)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		orders[fmt.Sprintf("shuffled-%d", seed)] = rows
	}
	for _, c := range []struct {
		name, mode string
		args       []string
	}{
		{"run-replay-powerdown", "replay", []string{"run"}},
		{"compare-replay-powerdown", "replay", []string{"compare", "--seeds", "2"}},
		{"run-inflation", "inflation", []string{"run"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := runOrdered(t, c.args, orderScenario(c.mode), base, pods)
			for name, rows := range orders {
				got := runOrdered(t, c.args, orderScenario(c.mode), rows, pods)
				for f, w := range want {
					if g, ok := got[f]; !ok {
						t.Errorf("%s: %s missing", name, f)
					} else if g != w {
						t.Errorf("%s: %s differs from the H100-first order's", name, f)
					}
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d files, want %d", name, len(got), len(want))
				}
			}
		})
	}
}
