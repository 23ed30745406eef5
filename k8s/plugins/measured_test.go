package plugins

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// measuredEnv is budgetEnv's cluster (nodes a and b, 2 T4 each, 70 W
// estimated in all) with PowerBudget in measured mode.
func measuredEnv(t *testing.T, fns []tf.RegisterPluginFunc) *env {
	t.Helper()
	e := newEnv(t, []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "T4", 2, 32000)}, nil, fns...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.factory.Start(ctx.Done())
	e.factory.WaitForCacheSync(ctx.Done())
	return e
}

// A decision that differs between the modes: budget 300 W, a pod with one
// vCPU and one whole GPU adds 165 W (budgetEnv), 70 + 165 = 235 W: the
// estimate admits it. Measured, b's GPUs draw 300 W against an estimate
// of 2 x 10 W: b counts 15 + 300 W, the cluster 35 + 315 = 350 W, and
// 350 + 165 = 515 W > 300 W: the pod waits (it fits an idle cluster, so it
// is not rejected).
func TestBudgetMeasuredModeDiffers(t *testing.T) {
	high := power.Readings{"b": {Watts: 300, Scope: power.ScopeGPU}}
	for _, tc := range []struct {
		name  string
		fns   []tf.RegisterPluginFunc
		admit bool
		gateW float64
	}{
		{"estimated", budgetPlugins(300), true, 70},
		{"measured", budgetMeasured(300, high), false, 350},
		{"measured below the estimate", budgetMeasured(300, power.Readings{"b": {Watts: 1, Scope: power.ScopeGPU}}), true, 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := measuredEnv(t, tc.fns)
			_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 1000, nil))
			if st.IsSuccess() != tc.admit {
				t.Fatalf("PreFilter %v, want admitted %v", st, tc.admit)
			}
			if !tc.admit && (st.Code() != 2 || !strings.Contains(st.Message(), "power budget")) {
				t.Errorf("status %v, want Unschedulable with the power budget reason", st)
			}
			if v, _ := testutil.GetGaugeMetricValue(gateClusterPower); v != tc.gateW {
				t.Errorf("wattsched_gate_cluster_power_watts %v, want %v", v, tc.gateW)
			}
			if v, _ := testutil.GetGaugeMetricValue(clusterPower); v != 70 {
				t.Errorf("wattsched_estimated_cluster_power_watts %v, want 70", v)
			}
		})
	}
}

// A node's switch to its estimate is counted and logged once per reason,
// and its fallback gauge follows.
func TestWatchedMeterFallbacks(t *testing.T) {
	m := fixedMeter{"a": {Watts: 50, Scope: power.ScopeGPU}}
	w := newWatchedMeter(m)
	before, _ := testutil.GetCounterMetricValue(measuredFallbacks.WithLabelValues(prom.ReasonNoSeries))
	for range 3 {
		if _, ok := w.Reading("zz"); ok {
			t.Fatal("reading for a node without series")
		}
	}
	if r, ok := w.Reading("a"); !ok || r.Watts != 50 {
		t.Errorf("a: %v %v", r, ok)
	}
	after, _ := testutil.GetCounterMetricValue(measuredFallbacks.WithLabelValues(prom.ReasonNoSeries))
	if after-before != 1 {
		t.Errorf("fallbacks counted %v times, want 1", after-before)
	}
}

func TestBudgetMeasuredArgs(t *testing.T) {
	for field, a := range map[string]BudgetArgs{
		"url":            {BudgetWatts: 100, Measured: &MeasuredArgs{}},
		"exporter":       {BudgetWatts: 100, Measured: &MeasuredArgs{Config: prom.Config{URL: "http://p:9090", Exporter: "x"}}},
		"refreshSeconds": {BudgetWatts: 100, Measured: &MeasuredArgs{Config: prom.Config{URL: "http://p:9090"}, RefreshSeconds: -2}},
	} {
		_, err := tf.NewFramework(context.Background(), append(budgetPlugins(100)[:len(budgetPlugins(100))-1], withArgs(BudgetName, a)), "wattsched")
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming it", field, err)
		}
	}
}

// The same decision with a real Prometheus: node b's GPUs are replayed at
// 150 W each (DCGM exposition, scraped every second); the plugin refreshes
// every 200 ms and the pod that the estimate admits waits once b's
// measurement arrives; node a has no series and counts its estimate.
//
// The same Prometheus scrapes kube-scheduler's metrics registry (the one
// its /metrics endpoint serves) and evaluates k8s/deploy/wattsched-alerts.yaml:
// the gate's figures arrive through the HTTP API, and every rule evaluates
// without error, the missing-measurement alert pending for node a.
func TestBudgetMeasuredWithPrometheus(t *testing.T) {
	exp := promtest.NewExporter(t, 1, promtest.Node{Name: "b", Model: "Tesla T4", GPUs: 2, IdleW: 150, FullW: 150, OtherW: 100})
	metricsSrv := httptest.NewServer(legacyregistry.Handler())
	t.Cleanup(metricsSrv.Close)
	rules, err := filepath.Abs("../deploy/wattsched-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := promtest.StartWithRules(t, []string{rules}, exp.Target, strings.TrimPrefix(metricsSrv.URL, "http://"))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fns := append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return newBudget(ctx, obj, h, promMeter)
		}, "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: 300, Measured: &MeasuredArgs{Config: prom.Config{URL: srv.URL}, RefreshSeconds: 0.2}}))
	e := measuredEnv(t, fns)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 1000, nil))
		if !st.IsSuccess() {
			t.Logf("waits: %s", st.Message())
			if !strings.Contains(st.Message(), "power budget") {
				t.Errorf("reason %q", st.Message())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("measured power never reached the gate in 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// b: 15 W (CPU estimate) + 300 W measured; a: 35 W estimated.
	if v, _ := testutil.GetGaugeMetricValue(gateClusterPower); v != 350 {
		t.Errorf("gate cluster power %v W, want 350", v)
	}
	if v, ok := nodeMetric(t, "wattsched_measured_power_fallback", "a"); !ok || v != 1 {
		t.Errorf("a's fallback gauge %v, want 1 (no series)", v)
	}
	if v, ok := nodeMetric(t, "wattsched_measured_power_fallback", "b"); !ok || v != 0 {
		t.Errorf("b's fallback gauge %v (present %v), want 0", v, ok)
	}
	if v, ok := nodeMetric(t, "wattsched_measured_node_power_watts", "a"); ok {
		t.Errorf("a's measured power %v W exported while it falls back", v)
	}

	// Through Prometheus: the scraped gauges, then the rules' state.
	c, err := prom.NewClient(srv.URL, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]float64{
		"wattsched_gate_cluster_power_watts":            350,
		"wattsched_estimated_cluster_power_watts":       70,
		`wattsched_measured_power_fallback{node="a"}`:   1,
		`wattsched_measured_node_power_watts{node="b"}`: 300,
		"wattsched_power_budget_watts":                  300,
	} {
		waitValue(t, c, q, want)
	}
	waitRules(t, srv.URL)
}

// waitValue polls Prometheus until q has one series equal to want.
func waitValue(t *testing.T, c *prom.Client, q string, want float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := c.Query(context.Background(), q, time.Now())
		if err == nil && len(s) == 1 && s[0].Value == want {
			t.Logf("%s = %v (through Prometheus)", q, want)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v (err %v), want one series = %v", q, s, err, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitRules polls /api/v1/rules until every rule has been evaluated
// without error and the missing-measurement alert is pending for node a.
func waitRules(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r struct {
			Data struct {
				Groups []struct {
					Rules []struct {
						Name, Health, LastError string
						State                   string
						Alerts                  []struct {
							Labels map[string]string
							State  string
						}
					}
				}
			}
		}
		resp, err := http.Get(base + "/api/v1/rules")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
		}
		ok, pending, n := true, false, 0
		for _, g := range r.Data.Groups {
			for _, rule := range g.Rules {
				n++
				if rule.Health != "ok" {
					ok = false
					if rule.Health == "err" {
						t.Fatalf("rule %s: %s", rule.Name, rule.LastError)
					}
				}
				for _, a := range rule.Alerts {
					if rule.Name == "WattschedMeasuredPowerMissing" && a.Labels["node"] == "a" && a.State == "pending" {
						pending = true
					}
				}
			}
		}
		if err == nil && ok && pending && n == 3 {
			t.Logf("3 rules evaluated, WattschedMeasuredPowerMissing pending for node a")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("rules: %+v (err %v): want 3 rules healthy and the missing-measurement alert pending for a", r.Data.Groups, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A catalog written by `wattsched calibrate` (the core's golden file)
// joins the plugins' catalog through extraCatalogFile, and PowerBudget
// estimates with it: an idle node of two calibrated T4s and one 32-vCPU
// Xeon socket draws 15 + 2 x 10.03 = 35.06 W (the file's idle_w).
func TestCalibratedCatalogInPlugins(t *testing.T) {
	file := "../../internal/cli/testdata/calibrate/catalog.yaml"
	fns := append(gpuPlugin(GPUArgs{ExtraCatalogFile: file}),
		tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: 1000}))
	e := newEnv(t, []*v1.Node{gpuNode("cal", "Tesla-T4-measured", 2, 32000)}, nil, fns...)
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 500, nil))
	if !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	if v, _ := nodeMetric(t, "wattsched_estimated_node_power_watts", "cal"); math.Abs(v-35.06) > 1e-9 {
		t.Errorf("estimated node power %v W, want 35.06", v)
	}
	// A calibrated name that shadows a catalog model is refused.
	dup := filepath.Join(t.TempDir(), "dup.yaml")
	if err := os.WriteFile(dup, []byte("gpus:\n  - {name: T4, idle_w: 1, tdp_w: 2, memory_gib: 0, source: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := tf.NewFramework(context.Background(), gpuPlugin(GPUArgs{ExtraCatalogFile: dup}), "wattsched")
	if err == nil || !strings.Contains(err.Error(), "extraCatalogFile") {
		t.Errorf("duplicate model: error %v", err)
	}
}

// Garbage from the metrics server never changes a decision: NaN,
// negative or absurd watts, or no answer at all, and the plugin decides
// on estimates (admitting the pod that TestBudgetMeasuredModeDiffers holds
// when b's 300 W are real), with the fallback counted by reason.
func TestBudgetMeasuredGarbageFallsBack(t *testing.T) {
	vector := func(v string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"Hostname":"b"},"value":[1700000000,"` + v + `"]}]}}`
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name, url, reason string
	}{
		{"NaN", serve(t, vector("NaN")), prom.ReasonInvalid},
		{"negative", serve(t, vector("-300")), prom.ReasonInvalid},
		{"absurd", serve(t, vector("1e7")), prom.ReasonInvalid},
		{"error answer", serve(t, `{"status":"error","errorType":"execution","error":"boom"}`), prom.ReasonQueryFailed},
		{"unreachable", closed.URL, prom.ReasonQueryFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			fns := append(gpuPlugin(GPUArgs{}),
				tf.RegisterPluginAsExtensions(BudgetName, func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
					return newBudget(ctx, obj, h, promMeter)
				}, "PreFilter", "Filter"),
				withArgs(BudgetName, BudgetArgs{BudgetWatts: 300, Measured: &MeasuredArgs{Config: prom.Config{URL: tc.url, TimeoutSeconds: 0.2}, RefreshSeconds: 0.05}}))
			e := measuredEnv(t, fns)
			counter := measuredFallbacks.WithLabelValues(tc.reason)
			before, _ := testutil.GetCounterMetricValue(counter)
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 1000, nil))
				if !st.IsSuccess() {
					t.Fatalf("held on garbage: %v", st)
				}
				if after, _ := testutil.GetCounterMetricValue(counter); after > before {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s fallback counted in 10 s", tc.reason)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if v, _ := testutil.GetGaugeMetricValue(gateClusterPower); v != 70 {
				t.Errorf("gate counted %v W, want the estimate 70 W", v)
			}
		})
	}
}

// serve answers every request with body.
func serve(t *testing.T, body string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
	t.Cleanup(s.Close)
	return s.URL
}
