package cli

import (
	"encoding/csv"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJobSpeedOutputs is issue 27's check of job speed: one pod of an
// hour on an L40S-only cluster runs longer than on an H100-only cluster
// when the trace's reference_gpu is the H100, and exactly as long when
// the reference is unknown; stdout, summary.json and report.html each say
// in one line which of the two held.
func TestJobSpeedOutputs(t *testing.T) {
	// ran runs the one-pod replay on nodes and returns the pod's run time
	// in seconds and the job speed line of each output.
	ran := func(t *testing.T, ref, nodes string) (float64, string) {
		t.Helper()
		d := t.TempDir()
		sc := replayScenario("")
		if ref != "" {
			sc = referenced(ref, "")
		}
		for name, body := range map[string]string{"s.yaml": sc, "nodes.csv": nodes, "pods.csv": onePod} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(d, "out")
		code, stdout, stderr := run(t, "run", "-c", filepath.Join(d, "s.yaml"), "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var sum struct {
			JobSpeed string `json:"job_speed"`
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if sum.JobSpeed == "" || !strings.Contains(stdout, sum.JobSpeed+"\n") || !strings.Contains(string(page), html.EscapeString(sum.JobSpeed)) {
			t.Errorf("job speed line %q missing from stdout or report.html\nstdout: %s", sum.JobSpeed, stdout)
		}
		f, err := os.Open(filepath.Join(out, "jobs.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("jobs.csv: %v, %d rows", err, len(rows))
		}
		start, err1 := strconv.ParseFloat(rows[1][4], 64)
		end, err2 := strconv.ParseFloat(rows[1][5], 64)
		if err1 != nil || err2 != nil || rows[0][4] != "start_s" || rows[0][5] != "end_s" {
			t.Fatalf("jobs.csv row %v", rows[1])
		}
		return end - start, sum.JobSpeed
	}
	cases := []struct {
		name, ref string
		longer    bool
		line      string
	}{
		// 3600 s on the H100, 3600/0.42 = 8571.429 s on the L40S.
		{"reference H100", "H100", true, "training pods measured on H100 run x2.38 on L40S"},
		{"reference unknown", "", false, "Job speed: not modelled, the reference GPU is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h100, _ := ran(t, tc.ref, h100Nodes)
			l40s, line := ran(t, tc.ref, l40sNodes)
			if h100 != 3600 {
				t.Errorf("pod ran %v s on the H100, want its traced 3600 s", h100)
			}
			if got := l40s > h100; got != tc.longer || (!tc.longer && l40s != h100) {
				t.Errorf("pod ran %v s on the L40S, %v s on the H100: longer = %v, want %v", l40s, h100, got, tc.longer)
			}
			if !strings.Contains(line, tc.line) {
				t.Errorf("job speed line %q, want it to contain %q", line, tc.line)
			}
		})
	}
}
