package cli

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// podsNode is one node of the generated pods case: its GPUs' true power is
// IdleW + (FullW - IdleW) x the share allocated to the pods on the GPU,
// plus uniform noise of +-NoiseW.
type podsNode struct {
	name, model         string
	gpus                int
	idleW, fullW, noise float64
}

var podsNodes = []podsNode{
	{"t1", "Tesla T4", 4, 10, 70, 0.5},
	{"h1", "NVIDIA H100 80GB HBM3", 4, 70, 700, 3},
}

const (
	podsSteps = 240 // one hour of 15 s samples
	podsStep  = 15 * time.Second
)

var podsT0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// podsCase writes a range-query answer (DCGM power and utilisation of
// podsNodes) and the pods dump that explains the power, and returns their
// paths. Time is cut into epochs of 4 to 16 samples per node; in each,
// every GPU is idle, holds one or two fractional pods (wattsched.io/gpu-milli
// with gpu-index) or one whole-GPU pod (nvidia.com/gpu: 1), or GPUs 2 and
// 3 hold one 2-GPU pod. A pod starts 7 s before its first sample and ends
// 7 s after its last; those in the last epoch still run. Utilisation is
// deliberately not the share: 0.6 x share + uniform noise of +-0.25,
// clipped to [0, 1], in whole percent.
func podsCase(t *testing.T, dir string) (query, pods string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(16, 3))
	ts := func(k int, off time.Duration) string {
		return podsT0.Add(time.Duration(k)*podsStep + off).Format(time.RFC3339)
	}
	var items []map[string]any
	pod := func(name, node string, start, end int, ann map[string]string, gpus int) {
		status := map[string]any{"phase": "Running", "startTime": ts(start, -7*time.Second)}
		if end < podsSteps {
			// Two containers: the later finishedAt is the pod's end.
			status = map[string]any{"phase": "Succeeded", "startTime": ts(start, -7*time.Second), "containerStatuses": []any{
				map[string]any{"state": map[string]any{"terminated": map[string]any{"finishedAt": ts(start, 0)}}},
				map[string]any{"state": map[string]any{"terminated": map[string]any{"finishedAt": ts(end-1, 7*time.Second)}}},
			}}
		}
		req := map[string]any{"cpu": "1"}
		if gpus > 0 {
			req["nvidia.com/gpu"] = fmt.Sprint(gpus)
		}
		items = append(items, map[string]any{"kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "ml", "creationTimestamp": ts(start, -30*time.Second), "annotations": ann},
			"spec":     map[string]any{"nodeName": node, "containers": []any{map[string]any{"resources": map[string]any{"requests": req}}}},
			"status":   status})
	}
	// Pods that hold no GPU share: a CPU pod and an unbound pending one.
	pod("cpu-only", "t1", 0, podsSteps, nil, 0)
	items = append(items, map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "waiting", "namespace": "ml", "creationTimestamp": ts(0, 0),
		"annotations": map[string]string{"wattsched.io/gpu-milli": "500"}}, "spec": map[string]any{}, "status": map[string]any{"phase": "Pending"}})

	type series struct {
		labels map[string]string
		values [][2]any
	}
	var result []series
	for _, n := range podsNodes {
		share := make([][]float64, n.gpus) // per GPU, per step
		for g := range share {
			share[g] = make([]float64, podsSteps)
		}
		id := 0
		for a := 0; a < podsSteps; {
			b := min(podsSteps, a+4+rng.IntN(13))
			set := func(g int, s float64) {
				for k := a; k < b; k++ {
					share[g][k] = s
				}
			}
			frac := func(g, milli int) {
				id++
				pod(fmt.Sprintf("%s-%d", n.name, id), n.name, a, b, map[string]string{"wattsched.io/gpu-milli": fmt.Sprint(milli), "wattsched.io/gpu-index": fmt.Sprint(g)}, 0)
			}
			first := 0
			if rng.IntN(4) == 0 {
				id++
				pod(fmt.Sprintf("%s-%d", n.name, id), n.name, a, b, map[string]string{"wattsched.io/gpu-index": "2,3"}, 2)
				set(2, 1)
				set(3, 1)
				first = 2 // GPUs 2 and 3 are taken
			}
			for g := 0; g < n.gpus; g++ {
				if first == 2 && g >= 2 {
					continue
				}
				switch rng.IntN(4) {
				case 0: // idle
				case 1:
					m := 100 * (1 + rng.IntN(9))
					frac(g, m)
					set(g, float64(m)/1000)
				case 2:
					m1 := 100 * (1 + rng.IntN(8))
					m2 := 100 * (1 + rng.IntN(9-m1/100))
					frac(g, m1)
					frac(g, m2)
					set(g, float64(m1+m2)/1000)
				case 3:
					id++
					pod(fmt.Sprintf("%s-%d", n.name, id), n.name, a, b, map[string]string{"wattsched.io/gpu-index": fmt.Sprint(g)}, 1)
					set(g, 1)
				}
			}
			a = b
		}
		for g := 0; g < n.gpus; g++ {
			lbl := func(name string) map[string]string {
				return map[string]string{"__name__": name, "gpu": fmt.Sprint(g), "UUID": fmt.Sprintf("GPU-%s-%d", n.name, g), "device": fmt.Sprintf("nvidia%d", g),
					"modelName": n.model, "Hostname": n.name, "instance": "dcgm-" + n.name + ":9400", "job": "dcgm"}
			}
			pw := series{labels: lbl("DCGM_FI_DEV_POWER_USAGE")}
			ut := series{labels: lbl("DCGM_FI_DEV_GPU_UTIL")}
			for k := 0; k < podsSteps; k++ {
				at := podsT0.Add(time.Duration(k) * podsStep).Unix()
				s := share[g][k]
				w := n.idleW + (n.fullW-n.idleW)*s + (2*rng.Float64()-1)*n.noise
				u := math.Round(100 * min(1, max(0, 0.6*s+(2*rng.Float64()-1)*0.25)))
				pw.values = append(pw.values, [2]any{at, fmt.Sprintf("%.3f", w)})
				ut.values = append(ut.values, [2]any{at, fmt.Sprintf("%.0f", u)})
			}
			result = append(result, pw, ut)
		}
	}
	res := make([]any, len(result))
	for i, s := range result {
		res[i] = map[string]any{"metric": s.labels, "values": s.values}
	}
	write := func(name string, v any) string {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	query = write("query.json", map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": res}})
	pods = write("pods.json", map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	return query, pods
}

// offBy is how far a calibrated model's idle and full power are from the
// generated truth (fractions).
func offBy(t *testing.T, path string, n podsNode) (idle, full float64, g hw.GPUModel) {
	t.Helper()
	g, err := readCatalog(t, path).GPU(strings.ReplaceAll(n.model, " ", "-") + "-measured")
	if err != nil {
		t.Fatal(err)
	}
	return math.Abs(float64(g.IdleW)-n.idleW) / n.idleW, math.Abs(float64(g.TDPW)-n.fullW) / n.fullW, g
}

// With --pods, power is fitted over the allocated share that generated it
// and idle and full power are recovered within 2%; the same samples fitted
// over utilisation (0.6 x share + noise) miss them by more than 10%.
func TestCalibratePodsRecoversShare(t *testing.T) {
	dir := t.TempDir()
	query, pods := podsCase(t, dir)
	byShare := filepath.Join(dir, "share.yaml")
	code, out, errs := run(t, "calibrate", "--from", query, "--pods", pods, "-o", byShare)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Logf("--pods:\n%s", out)
	if !strings.Contains(out, "share range") || !strings.Contains(out, "0-100%") {
		t.Errorf("table does not show the share range 0-100%%:\n%s", out)
	}
	byUtil := filepath.Join(dir, "util.yaml")
	if code, out, errs = run(t, "calibrate", "--from", query, "-o", byUtil); code != 0 {
		t.Fatalf("utilisation fit: exit %d: %s", code, errs)
	}
	t.Logf("utilisation:\n%s", out)
	curve := filepath.Join(dir, "curve.yaml")
	if code, _, errs = run(t, "calibrate", "--from", query, "--pods", pods, "--curve", "0.5", "-o", curve); code != 0 {
		t.Fatalf("curve: exit %d: %s", code, errs)
	}
	for _, n := range podsNodes {
		idle, full, g := offBy(t, byShare, n)
		t.Logf("%s over share: idle %.3f W (truth %.0f, off by %.2f%%), full %.3f W (truth %.0f, off by %.2f%%)", n.model, g.IdleW, n.idleW, idle*100, g.TDPW, n.fullW, full*100)
		if idle > 0.02 || full > 0.02 {
			t.Errorf("%s over share: idle %v W, full %v W; want %v and %v within 2%%", n.model, g.IdleW, g.TDPW, n.idleW, n.fullW)
		}
		if !strings.Contains(g.Source, "vs allocated GPU share (pods of "+pods+")") {
			t.Errorf("source %q does not say what was fitted", g.Source)
		}
		uIdle, uFull, ug := offBy(t, byUtil, n)
		t.Logf("%s over utilisation: idle %.3f W (off by %.2f%%), full %.3f W (off by %.2f%%)", n.model, ug.IdleW, uIdle*100, ug.TDPW, uFull*100)
		if uIdle < 0.1 && uFull < 0.1 {
			t.Errorf("%s over utilisation: idle and full within 10%% of the truth: the case does not tell share from utilisation", n.model)
		}
		_, _, cg := offBy(t, curve, n)
		mid := (n.idleW + n.fullW) / 2
		if len(cg.Curve) != 1 || math.Abs(float64(cg.Curve[0].Watts)-mid)/mid > 0.02 {
			t.Errorf("%s curve %v, want {0.5, %v W} within 2%%", n.model, cg.Curve, mid)
		}
	}
	// Same input, same bytes.
	again := filepath.Join(dir, "again.yaml")
	if code, _, errs := run(t, "calibrate", "--from", query, "--pods", pods, "-o", again); code != 0 {
		t.Fatal(errs)
	}
	a, _ := os.ReadFile(byShare)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Error("calibrating the same files twice gave different bytes")
	}
}

// Bad pods dumps and series that match no pod's node are errors that say
// where or what was looked for; nothing is written.
func TestCalibratePodsErrors(t *testing.T) {
	dir := t.TempDir()
	query, pods := podsCase(t, dir)
	raw, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// item 2 is the first GPU pod of t1 (after cpu-only and waiting).
	alter := func(name string, f func(p map[string]any)) string {
		var d map[string]any
		_ = json.Unmarshal(raw, &d)
		f(d["items"].([]any)[2].(map[string]any))
		b, _ := json.Marshal(d)
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ann := func(p map[string]any) map[string]any {
		return p["metadata"].(map[string]any)["annotations"].(map[string]any)
	}
	badStart := alter("bad-start", func(p map[string]any) { p["status"].(map[string]any)["startTime"] = "noon" })
	badIndex := alter("bad-index", func(p map[string]any) { ann(p)["wattsched.io/gpu-index"] = "zero" })
	badMilli := alter("bad-milli", func(p map[string]any) { ann(p)["wattsched.io/gpu-milli"] = "1500" })
	noFinish := alter("no-finish", func(p map[string]any) {
		s := p["status"].(map[string]any)
		s["phase"] = "Succeeded"
		delete(s, "containerStatuses")
	})
	notJSON := filepath.Join(dir, "not.json")
	_ = os.WriteFile(notJSON, []byte(`{"items": [`), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad start time", []string{"--pods", badStart}, badStart + `: items[2].status.startTime: "noon" is not RFC 3339`},
		{"bad gpu-index", []string{"--pods", badIndex}, badIndex + `: items[2].metadata.annotations["wattsched.io/gpu-index"]: "zero"`},
		{"bad gpu-milli", []string{"--pods", badMilli}, badMilli + `: items[2].metadata.annotations["wattsched.io/gpu-milli"]: "1500"`},
		{"not JSON", []string{"--pods", notJSON}, notJSON + ": unexpected EOF"},
		{"missing file", []string{"--pods", filepath.Join(dir, "nope.json")}, "nope.json"},
		// 2 nodes x 4 GPUs x 240 samples = 1920 power samples, none on a node named "dcgm-...".
		{"node label matches nothing", []string{"--pods", pods, "--node-label", "instance"}, `no DCGM_FI_DEV_POWER_USAGE sample matched a node and GPU of ` + pods + ` (1920 of a node it lacks, 0 while a pod with unknown GPUs ran): looked for the node in label "instance" and the GPU index in label "gpu"; the series' nodes: dcgm-h1:9400, dcgm-t1:9400; the pods' nodes: h1, t1`},
		{"no such label", []string{"--pods", pods, "--node-label", "node"}, `data.result[0].metric: no "node" label (the node)`},
		{"GPU label not an index", []string{"--pods", pods, "--gpu-label", "UUID"}, `data.result[0].metric: label "UUID" "GPU-t1-0": want a GPU index`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out.yaml")
			code, _, errs := run(t, append([]string{"calibrate", "--from", query, "-o", out}, tc.args...)...)
			if code != 1 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q: want exit 1 and an error containing %q", code, errs, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output written despite the error")
			}
		})
	}
	// An ended pod without finishedAt (as the kubelet writes a container
	// it never saw end) is no error: its node's samples from its start on
	// are left out.
	out := filepath.Join(dir, "nofinish.yaml")
	if code, stdout, errs := run(t, "calibrate", "--from", query, "--pods", noFinish, "-o", out); code != 0 || !strings.Contains(stdout, "left out") {
		t.Errorf("ended pod without finishedAt: exit %d, stdout %q, stderr %q: want exit 0 and samples left out", code, stdout, errs)
	}
}

// Samples that cannot be paired are left out and counted: those of a node
// the dump does not know (t1's pods removed), and those taken while a GPU
// pod without wattsched.io/gpu-index ran on its node.
func TestCalibratePodsLeftOut(t *testing.T) {
	dir := t.TempDir()
	query, pods := podsCase(t, dir)
	raw, err := os.ReadFile(pods)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var kept []any
	var start, end time.Time
	for _, it := range doc["items"].([]any) {
		p := it.(map[string]any)
		if p["spec"].(map[string]any)["nodeName"] == "t1" {
			continue
		}
		ann, _ := p["metadata"].(map[string]any)["annotations"].(map[string]any)
		if _, ok := ann["wattsched.io/gpu-index"]; ok && start.IsZero() && p["spec"].(map[string]any)["nodeName"] == "h1" && p["status"].(map[string]any)["phase"] == "Succeeded" {
			delete(ann, "wattsched.io/gpu-index")
			st := p["status"].(map[string]any)
			start, _ = time.Parse(time.RFC3339, st["startTime"].(string))
			cs := st["containerStatuses"].([]any)
			end, _ = time.Parse(time.RFC3339, cs[len(cs)-1].(map[string]any)["state"].(map[string]any)["terminated"].(map[string]any)["finishedAt"].(string))
		}
		kept = append(kept, it)
	}
	doc["items"] = kept
	b, _ := json.Marshal(doc)
	altered := filepath.Join(dir, "altered.json")
	if err := os.WriteFile(altered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The unindexed pod covers the samples from start to end, on all 4
	// GPUs of h1; t1 has 4 GPUs x 240 samples.
	unknown := 0
	for k := 0; k < podsSteps; k++ {
		if at := podsT0.Add(time.Duration(k) * podsStep); !at.Before(start) && !at.After(end) {
			unknown += 4
		}
	}
	out := filepath.Join(dir, "out.yaml")
	code, stdout, errs := run(t, "calibrate", "--from", query, "--pods", altered, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		fmt.Sprintf("left out 960 power samples of nodes %s has no pod or Node item for (t1; label Hostname)\n", altered),
		fmt.Sprintf("left out %d power samples taken while a GPU pod without wattsched.io/gpu-index ran on the node (its GPUs unknown)\n", unknown),
		"wrote " + out + " (1 GPU models)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if unknown == 0 {
		t.Error("no pod was altered")
	}
}

// Through a real Prometheus: an exporter serves one T4-like node's four
// GPUs (10 W idle, 70 W full, +-0.2 W noise) whose power follows a
// schedule of pods, 3 s epochs each holding 0, 250, 500, 750 or 1000
// thousandths of each GPU. Each sample carries the explicit timestamp of
// its second, and each scrape serves the last three seconds, so every
// second of the range query (step 1 s) finds its own sample even when a
// scrape is late. calibrate --prometheus --pods recovers idle and full
// power within 2%.
func TestCalibratePodsWithPrometheus(t *testing.T) {
	milli := func(g int, e int64) int64 {
		h := fnv.New64a()
		fmt.Fprint(h, g, e)
		return int64(h.Sum64()%5) * 250
	}
	var base int64 // Unix second of epoch 0; no pods before it; set once, under mu
	watts := func(g int, s, base int64) float64 {
		share := 0.0
		if s >= base {
			share = float64(milli(g, (s-base)/3)) / 1000
		}
		h := fnv.New64a()
		fmt.Fprint(h, "noise", g, s)
		return 10 + 60*share + (float64(h.Sum64()%1001)/1000-0.5)*2*0.2
	}
	var mu sync.Mutex
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := base
		mu.Unlock()
		now := time.Now().Unix()
		fmt.Fprintln(w, "# TYPE DCGM_FI_DEV_POWER_USAGE gauge")
		for g := 0; g < 4; g++ {
			for s := now - 2; s <= now; s++ {
				if b == 0 || s < b-5 {
					continue
				}
				fmt.Fprintf(w, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",modelName=\"Tesla T4\",Hostname=\"p1\"} %.3f %d\n", g, watts(g, s, b), s*1000)
			}
		}
	}))
	defer exp.Close()
	srv := promtest.Start(t, strings.TrimPrefix(exp.URL, "http://"))
	mu.Lock()
	base = time.Now().Unix() + 2
	mu.Unlock()
	const epochs = 10
	for time.Now().Unix() < base+3*epochs+3 {
		time.Sleep(250 * time.Millisecond)
	}
	end := base + 3*epochs - 1
	var items []any
	for g := 0; g < 4; g++ {
		for e := int64(0); e < epochs; e++ {
			m := milli(g, e)
			if m == 0 {
				continue
			}
			ann := map[string]string{"wattsched.io/gpu-index": fmt.Sprint(g)}
			req := map[string]string{}
			if m < 1000 {
				ann["wattsched.io/gpu-milli"] = fmt.Sprint(m)
			} else {
				req["nvidia.com/gpu"] = "1"
			}
			at := func(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }
			items = append(items, map[string]any{"kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("g%d-e%d", g, e), "namespace": "ml", "creationTimestamp": at(base), "annotations": ann},
				"spec":     map[string]any{"nodeName": "p1", "containers": []any{map[string]any{"resources": map[string]any{"requests": req}}}},
				"status": map[string]any{"phase": "Succeeded", "startTime": at(base + 3*e),
					"containerStatuses": []any{map[string]any{"state": map[string]any{"terminated": map[string]any{"finishedAt": at(base + 3*e + 2)}}}}}})
		}
	}
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.json")
	b, _ := json.Marshal(map[string]any{"kind": "List", "items": items})
	if err := os.WriteFile(pods, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "live.yaml")
	code, stdout, errs := run(t, "calibrate", "--prometheus", srv.URL, "--range", fmt.Sprintf("%d,%d,1s", base, end), "--pods", pods, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Logf("\n%s", stdout)
	n := podsNode{"p1", "Tesla T4", 4, 10, 70, 0.2}
	idle, full, g := offBy(t, out, n)
	t.Logf("live --pods: idle %.3f W (off by %.2f%%), full %.3f W (off by %.2f%%)", g.IdleW, idle*100, g.TDPW, full*100)
	if idle > 0.02 || full > 0.02 {
		t.Errorf("idle %v W, full %v W: want 10 W and 70 W within 2%%", g.IdleW, g.TDPW)
	}
}
