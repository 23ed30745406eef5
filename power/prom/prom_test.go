package prom_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

const seed = 7

// The trace's nodes: a and f are healthy (2 and 1 T4-like GPUs, 10 W idle
// and 70 W full, 100 W for the rest of the node); b's exporter stopped
// three minutes ago; c, d and e serve NaN, negative and absurd watts.
var nodes = []promtest.Node{
	{Name: "a", Model: "Tesla T4", GPUs: 2, IdleW: 10, FullW: 70, NoiseW: 0.5, OtherW: 100},
	{Name: "b", Model: "Tesla V100-SXM2-16GB", GPUs: 1, IdleW: 30, FullW: 300, OtherW: 100, StaleBy: 3 * time.Minute},
	{Name: "c", Model: "Tesla T4", GPUs: 1, IdleW: 10, FullW: 70, Bad: "NaN"},
	{Name: "d", Model: "Tesla T4", GPUs: 1, IdleW: 10, FullW: 70, Bad: "-5"},
	{Name: "e", Model: "Tesla T4", GPUs: 1, IdleW: 10, FullW: 70, Bad: "99999"},
	{Name: "f", Model: "Tesla T4", GPUs: 1, IdleW: 10, FullW: 70, OtherW: 100},
}

// refreshUntil refreshes m until node has a reading (Prometheus needs a
// few scrapes).
func refreshUntil(t *testing.T, m *prom.Meter, node string, ok func(prom.Status) bool) prom.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := m.Refresh(context.Background())
		st := m.Status(node)
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: no wanted status after 30 s: %+v (refresh: %v)", node, st, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A real Prometheus server scrapes the replayed DCGM and Kepler series;
// the meter reads them through the HTTP API and falls back, with the
// right reason, for stale, invalid and missing nodes.
func TestMeterAgainstPrometheus(t *testing.T) {
	exp := promtest.NewExporter(t, seed, nodes...)
	srv := promtest.Start(t, exp.Target)

	t.Run("dcgm", func(t *testing.T) {
		m, err := prom.NewMeter(prom.Config{URL: srv.URL, Exporter: prom.DCGM})
		if err != nil {
			t.Fatal(err)
		}
		st := refreshUntil(t, m, "a", func(s prom.Status) bool { return s.OK })
		if st.Reading.Scope != power.ScopeGPU {
			t.Errorf("scope %q, want gpu", st.Reading.Scope)
		}
		// The reading is the sum of a's two GPUs at one step of the trace.
		steps := exp.Steps()
		found := -1
		for k := 0; k < steps && found < 0; k++ {
			var w float64
			for g := 0; g < 2; g++ {
				w += promtest.Power(nodes[0], seed, 0, g, k, promtest.Util(seed, 0, g, k))
			}
			if math.Abs(w-float64(st.Reading.Watts)) < 0.01 {
				found = k
			}
		}
		if found < 0 {
			t.Errorf("reading %.3f W is no step's sum of a's GPUs (0..%d)", st.Reading.Watts, steps-1)
		}
		t.Logf("a: %.3f W = trace step %d; age %v", st.Reading.Watts, found, st.Age)
		for node, want := range map[string]string{"b": prom.ReasonStale, "c": prom.ReasonInvalid, "d": prom.ReasonInvalid,
			"e": prom.ReasonInvalid, "zzz": prom.ReasonNoSeries} {
			if got := m.Status(node); got.OK || got.Reason != want {
				t.Errorf("node %s: %+v, want fallback %s", node, got, want)
			} else {
				t.Logf("node %s falls back: %s (%s)", node, got.Reason, got.Detail)
			}
		}
		if age := m.Status("b").Age; age < 2*time.Minute || age > 4*time.Minute {
			t.Errorf("b's age %v, want about 3 min", age)
		}
		if _, ok := m.Reading("b"); ok {
			t.Error("Reading(b) ok for a stale node")
		}

		// Answers: every node's answer holds until the instant it gives,
		// and one node's changes right after it; a refresh changes gen.
		gen, now, until := m.Answers()
		if until.IsZero() || until.Before(now) {
			t.Fatalf("Answers: now %v, until %v; want an instant ahead (a and f are fresh)", now, until)
		}
		all := []string{"a", "b", "c", "d", "e", "f", "zzz"}
		answers := func(at time.Time) map[string]string {
			m.SetClock(func() time.Time { return at })
			defer m.SetClock(time.Now)
			got := map[string]string{}
			for _, node := range all {
				r, reason, ok := m.Check(node)
				got[node] = fmt.Sprint(r, reason, ok)
			}
			return got
		}
		atNow, atUntil, after := answers(now), answers(until), answers(until.Add(time.Nanosecond))
		if !maps.Equal(atNow, atUntil) {
			t.Errorf("answers changed before the instant Answers gave:\n%v\n%v", atNow, atUntil)
		}
		if maps.Equal(atUntil, after) {
			t.Errorf("no answer changed right after the instant Answers gave (%v)", atUntil)
		}
		if _, err := m.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if g, _, _ := m.Answers(); g == gen {
			t.Errorf("gen %d unchanged by a refresh", g)
		}
	})

	t.Run("recorded range replays what the meter saw", func(t *testing.T) {
		// The meter's readings at past instants, and a range query over the
		// same instants read back as a Recorded meter, agree node by node:
		// same reading (to 1 nW) or the same reason to fall back. The one
		// exception is b, whose exporter serves 3-minute-old samples: an
		// instant query still returns them (within Prometheus' 5-minute
		// lookback), and a range answer carries its evaluation times, not
		// the samples', so the recording cannot see that b is stale.
		live, err := prom.NewMeter(prom.Config{URL: srv.URL, Exporter: prom.DCGM})
		if err != nil {
			t.Fatal(err)
		}
		c, err := prom.NewClient(srv.URL, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// Wait until the last five seconds hold a sample of every series.
		var series []prom.Series
		var start, end time.Time
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			end = time.Now().Add(-time.Second).Truncate(time.Second)
			start = end.Add(-4 * time.Second)
			if series, err = c.QueryRange(context.Background(), "DCGM_FI_DEV_POWER_USAGE", start, end, time.Second); err != nil {
				t.Fatal(err)
			}
			full := 0
			for _, x := range series {
				if len(x.Points) == 5 {
					full++
				}
			}
			if full == 7 { // a's two GPUs, b to f one each
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s, %d of 7 series have 5 points", full)
			}
		}
		rec, err := prom.NewRecorded(series, prom.RecordedConfig{Exporter: prom.DCGM})
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for at := start; !at.After(end); at = at.Add(time.Second) {
			live.SetClock(func() time.Time { return at })
			if _, err := live.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, node := range []string{"a", "b", "c", "d", "e", "f", "zzz"} {
				l, r := live.Status(node), rec.Status(node, at)
				if node == "b" {
					if l.OK || l.Reason != prom.ReasonStale || !r.OK {
						t.Errorf("%s b: live %+v, recorded %+v; want stale live, a reading recorded", at.Format(time.TimeOnly), l, r)
					}
					continue
				}
				if l.OK != r.OK || l.Reason != r.Reason || math.Abs(float64(l.Reading.Watts-r.Reading.Watts)) > 1e-9 || l.Reading.Scope != r.Reading.Scope {
					t.Errorf("%s node %s: live %+v, recorded %+v", at.Format(time.TimeOnly), node, l, r)
				}
				if l.OK {
					compared++
				}
			}
		}
		if compared < 5*2 { // a and f at 5 instants
			t.Errorf("only %d readings compared", compared)
		}
		t.Logf("%d readings of %d series agree at 5 instants", compared, rec.Series())
	})

	t.Run("kepler", func(t *testing.T) {
		m, err := prom.NewMeter(prom.Config{URL: srv.URL, Exporter: prom.Kepler})
		if err != nil {
			t.Fatal(err)
		}
		// irate() needs two samples of the counter in its window.
		st := refreshUntil(t, m, "f", func(s prom.Status) bool { return s.OK })
		// f: 100 W + one GPU between 10 and 70 W, over the last two samples.
		if w := float64(st.Reading.Watts); st.Reading.Scope != power.ScopeNode || w < 109 || w > 171 {
			t.Errorf("f: %+v, want 110..170 W for the whole node", st.Reading)
		}
		t.Logf("f (Kepler platform): %.1f W", st.Reading.Watts)
		// b's frozen counter has one sample: irate gives no series, and
		// the staleness check never sees it; either way it falls back.
		if got := m.Status("b"); got.OK || (got.Reason != prom.ReasonStale && got.Reason != prom.ReasonNoSeries) {
			t.Errorf("b: %+v, want a fallback", got)
		}
	})

	t.Run("missing node label", func(t *testing.T) {
		m, err := prom.NewMeter(prom.Config{URL: srv.URL, NodeLabel: "kubernetes_node"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Refresh(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.Unlabelled == 0 {
			t.Error("no unlabelled series counted")
		}
		if got := m.Status("a"); got.OK || got.Reason != prom.ReasonNoSeries {
			t.Errorf("a: %+v, want no_series", got)
		}
	})

	t.Run("query error from the server", func(t *testing.T) {
		m, err := prom.NewMeter(prom.Config{URL: srv.URL, PowerQuery: "sum(DCGM_FI_DEV_POWER_USAGE"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Refresh(context.Background())
		if err == nil || !strings.Contains(err.Error(), "bad_data") {
			t.Fatalf("refresh error %v, want the server's bad_data error", err)
		}
		if got := m.Status("a"); got.OK || got.Reason != prom.ReasonQueryFailed {
			t.Errorf("a: %+v, want query_failed", got)
		}
	})
}

// Without a server, or with one too slow or answering garbage, every node
// falls back and Refresh returns within its timeout.
func TestMeterUnavailable(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}}`))
	}))
	defer garbage.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	for name, url := range map[string]string{"slow": slow.URL, "garbage": garbage.URL, "unreachable": closedURL} {
		t.Run(name, func(t *testing.T) {
			m, err := prom.NewMeter(prom.Config{URL: url, TimeoutSeconds: 0.3})
			if err != nil {
				t.Fatal(err)
			}
			if st := m.Status("a"); st.OK || st.Reason != prom.ReasonNotRefreshed {
				t.Errorf("before refresh: %+v", st)
			}
			if _, err := m.Refresh(context.Background()); err == nil {
				t.Fatal("refresh succeeded")
			} else {
				t.Logf("refresh: %v", err)
			}
			if st := m.Status("a"); st.OK || st.Reason != prom.ReasonQueryFailed {
				t.Errorf("after refresh: %+v, want query_failed", st)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	cases := map[string]prom.Config{
		"url":               {URL: "localhost:9090"},
		"exporter":          {URL: "http://p:9090", Exporter: "nvml"},
		"scope":             {URL: "http://p:9090", Scope: "rack"},
		"staleAfterSeconds": {URL: "http://p:9090", StaleAfterSeconds: -1},
		"maxSeriesWatts":    {URL: "http://p:9090", MaxSeriesWatts: math.Inf(1)},
	}
	for field, c := range cases {
		if _, err := prom.NewMeter(c); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %s", field, err, field)
		}
	}
}
