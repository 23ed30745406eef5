package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// dashboardPanel is one panel of the chart's Grafana dashboard.
type dashboardPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// dashboardPanels reads the panels of charts/wattsched-scheduler/files/dashboard.json.
func dashboardPanels(t *testing.T) []dashboardPanel {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "charts", "wattsched-scheduler", "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("dashboard.json: no panels")
	}
	return d.Panels
}

// budgetOnly matches the series that exist only with PowerBudget (and
// measured mode) or once a pod does not add up on its node.
var budgetOnly = regexp.MustCompile(`wattsched_(power_budget|power_headroom|estimated_cluster|estimated_node|gate_|measured_|inconsistent_pods)`)

// promQuery evaluates expr now; it returns the values of the result's
// series (an empty slice: no data).
func promQuery(base, expr string) ([]float64, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	var out []float64
	for _, s := range r.Data.Result {
		v, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// The chart's dashboard shows something on day one: a scheduler with the
// deployed configuration (four profiles, no PowerBudget) places a few pods
// of each profile on a real API server, a real Prometheus scrapes the
// scheduler's metrics registry, and every panel's queries, read from the
// dashboard file, return data: every query that reads no budget-only
// series returns at least one series with a number (not NaN), and every
// panel at least one such query.
func TestDashboardPanelsWithoutBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an API server, a scheduler and Prometheus")
	}
	// kube-scheduler serves this registry on /metrics; the scheduler runs
	// in this process, so a test server serves the same registry.
	metricsSrv := httptest.NewServer(legacyregistry.Handler())
	t.Cleanup(metricsSrv.Close)
	srv := promtest.Start(t, strings.TrimPrefix(metricsSrv.URL, "http://"))

	cs, rc := apiServer(t)
	for _, s := range []cluster.NodeSpec{
		{Name: "t4", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, GPUModel: "T4"},
		{Name: "v100", CPUMilli: 96000, MemMiB: 65536, GPUs: 8, GPUModel: "V100M16"},
		{Name: "cpu", CPUMilli: 16000, MemMiB: 65536},
	} {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, cs, rc, deployConfig())
	// Pods after Prometheus's first scrapes, so that the counters'
	// increases over the panels' windows are not zero.
	time.Sleep(3 * time.Second)
	task := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 500}}
	var names []string
	for _, profile := range []string{"wattsched-pwr", "wattsched-fgd", "wattsched-pwr-fgd", "wattsched-energy"} {
		for i := range 2 {
			name := fmt.Sprintf("%s-%d", profile, i)
			if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&task, name, profile), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
	}
	for _, name := range names {
		if out, err := waitScheduled(cs, name, 60*time.Second); err != nil || out.Node == "" {
			t.Fatalf("pod %s: %+v, %v", name, out, err)
		}
	}

	panels := dashboardPanels(t)
	var missing []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		missing = missing[:0]
		for _, p := range panels {
			fed := false
			for _, tg := range p.Targets {
				vs, err := promQuery(srv.URL, tg.Expr)
				if err != nil {
					t.Fatalf("panel %q query %s %q: %v", p.Title, tg.RefID, tg.Expr, err)
				}
				number := false
				for _, v := range vs {
					number = number || !math.IsNaN(v)
				}
				fed = fed || number
				if !number && !budgetOnly.MatchString(tg.Expr) {
					missing = append(missing, fmt.Sprintf("panel %q query %s %q: %v", p.Title, tg.RefID, tg.Expr, vs))
				}
			}
			if !fed {
				missing = append(missing, fmt.Sprintf("panel %q: no query returns data", p.Title))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s of scrapes:\n%s", strings.Join(missing, "\n"))
		}
	}
	// The figures behind the panels: three nodes modelled by each of the
	// four profiles, and each profile's two pods counted once per
	// score plugin.
	for expr, want := range map[string]float64{
		`count(wattsched_modelled_node_power_watts)`:                    12,
		`sum(wattsched_pods_placed_total{profile="wattsched-pwr"})`:     2,
		`sum(wattsched_pods_placed_total{profile="wattsched-pwr-fgd"})`: 4, // PWR and FGD
	} {
		vs, err := promQuery(srv.URL, expr)
		if err != nil || len(vs) != 1 || vs[0] != want {
			t.Errorf("%s = %v (%v), want %v", expr, vs, err, want)
		}
	}
}
