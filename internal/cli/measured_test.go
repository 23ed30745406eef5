package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// measuredExampleFile is the recorded answer examples/replay-measured.yaml
// replays.
const measuredExampleFile = "../../examples/data/measured-dcgm.json"

// measuredExample generates the example's recorded DCGM answer, in the
// format of Prometheus' /api/v1/query_range for DCGM_FI_DEV_POWER_USAGE:
// the first four 8-GPU nodes of the openb GPU node list, every 15 minutes
// from 2023-05-21 00:00 to 2023-05-24 00:00 UTC (days 140-143 of the openb
// Default replay, whose estimated peak under FGD falls on day 141), each GPU reading
// its catalog idle power plus 40 W (+-2 W, a hash of node, GPU and step).
// 40 W stands for a GPU held in its P0 state by a resident CUDA context,
// 26-50 W over bare idle on HBM GPUs in Vadari, "The Model Parking Tax"
// (arXiv:2605.23918, 2026). The values are generated, not measured.
func measuredExample() ([]byte, error) {
	nodes, err := alibaba2023.GPUNodes()
	if err != nil {
		return nil, err
	}
	cat := hw.Default()
	start := time.Date(2023, 5, 21, 0, 0, 0, 0, time.UTC)
	const step, steps = 15 * time.Minute, 3*24*4 + 1
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	picked := 0
	for _, n := range nodes {
		if n.GPUs != 8 || picked == 4 {
			continue
		}
		picked++
		m, err := cat.GPU(n.GPUModel)
		if err != nil {
			return nil, err
		}
		for g := 0; g < n.GPUs; g++ {
			if picked > 1 || g > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, `{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":%q,"UUID":"GPU-%s-%d","device":"nvidia%d","gpu":"%d","instance":"10.0.0.%d:9400","job":"dcgm-exporter","modelName":%q},"values":[`,
				n.Name, n.Name, g, g, g, picked, n.GPUModel)
			for k := 0; k < steps; k++ {
				if k > 0 {
					b.WriteString(",")
				}
				h := fnv.New64a()
				fmt.Fprintf(h, "%s/%d/%d", n.Name, g, k)
				noise := float64(h.Sum64()%4001)/1000 - 2
				fmt.Fprintf(&b, `[%d,"%.3f"]`, start.Add(time.Duration(k)*step).Unix(), float64(m.IdleW)+40+noise)
			}
			b.WriteString("]}")
		}
	}
	b.WriteString("]}}\n")
	return b.Bytes(), nil
}

// The committed example file is what measuredExample generates; refresh
// it with `go test ./internal/cli -run MeasuredExampleFile -update`.
func TestMeasuredExampleFile(t *testing.T) {
	want, err := measuredExample()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(measuredExampleFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(measuredExampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from measuredExample's output (%d vs %d bytes); regenerate it with -update", measuredExampleFile, len(got), len(want))
	}
}

// The example's recorded readings change the gate's decisions: with them
// FGD holds tasks that the estimates alone admit (four nodes read 40 W per
// GPU over their model idle power during the estimated peak), and the
// summary counts the readings it used. Without the measured section the
// same scenario is the estimate-only gate.
func TestMeasuredExampleChangesDecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("whole runs")
	}
	b, err := os.ReadFile("../../examples/replay-measured.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\nmeasured:")
	if i < 0 {
		t.Fatal("no measured section in the example")
	}
	dir := t.TempDir()
	estimated := filepath.Join(dir, "estimated.yaml")
	if err := os.WriteFile(estimated, []byte(doc[:i+1]), 0o644); err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Policies []struct {
			Policy    string  `json:"policy"`
			MeanWaitS float64 `json:"mean_wait_s"`
			Measured  *struct {
				Lookups, Measured int
				Fallbacks         map[string]int
			} `json:"measured"`
		} `json:"policies"`
	}
	read := func(scen, out string) summary {
		if code, _, stderr := run(t, "run", "-c", scen, "-o", out); code != 0 {
			t.Fatalf("%s: exit %d: %s", scen, code, stderr)
		}
		var s summary
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	m := read("../../examples/replay-measured.yaml", filepath.Join(dir, "m"))
	e := read(estimated, filepath.Join(dir, "e"))
	fgdM, fgdE := m.Policies[0], e.Policies[0]
	if fgdM.Policy != "FGD" || fgdE.Measured != nil || fgdM.Measured == nil {
		t.Fatalf("summaries: %+v / %+v", m, e)
	}
	if !(fgdM.MeanWaitS > fgdE.MeanWaitS) {
		t.Errorf("FGD mean wait %.3f s with measured power, %.3f s with estimates; want longer with measured", fgdM.MeanWaitS, fgdE.MeanWaitS)
	}
	got := fgdM.Measured
	if got.Measured == 0 || got.Fallbacks["stale"] == 0 || got.Fallbacks["no_series"] == 0 ||
		got.Measured+got.Fallbacks["stale"]+got.Fallbacks["no_series"] != got.Lookups {
		t.Errorf("FGD measured lookups %+v: want readings, stale and no_series fallbacks that add up", got)
	}
	t.Logf("FGD mean wait: %.3f s measured, %.3f s estimated; lookups %+v", fgdM.MeanWaitS, fgdE.MeanWaitS, *got)
}

// A recording that names none of the cluster's nodes is refused before any
// run, naming both sides, and leaves no output.
func TestMeasuredNoMatchingNode(t *testing.T) {
	dir := t.TempDir()
	rec := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"gpu-node-7"},"values":[[1700000000,"80"]]}]}}`
	if err := os.WriteFile(filepath.Join(dir, "rec.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := "name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\npower_limit: {watts: 250000}\nmeasured: {file: rec.json}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := run(t, "run", "-c", filepath.Join(dir, "s.yaml"), "-o", out)
	if code == 0 || !strings.Contains(stderr, "measured.file rec.json: no series names a node of the cluster in its Hostname label: the file has gpu-node-7; the node list has openb-node-0000") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output directory left behind: %v", err)
	}
}
