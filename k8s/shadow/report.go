package shadow

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/replay"
	"github.com/wattsched/wattsched/scenario"
)

// ReasonText says what each reason of a differing placement means in the
// shadow, in the kwok replay parity's terms (there the simulator stands
// where the profile stands here, kube-scheduler where the cluster's
// scheduler stands).
var ReasonText = map[string]string{
	replay.ReasonTie:     "the actual node is one of the profile's equally best nodes on the real snapshot; the profile's tie-break picked another",
	replay.ReasonState:   "on the real snapshot the profile picks exactly the actual node; its own shadow state differed (its earlier placements)",
	replay.ReasonPlugin:  "not among the profile's best nodes on the real snapshot: the cluster's scheduler (its own plugins and weights) chose otherwise",
	replay.ReasonStarted: "no node was feasible for the profile on its shadow state; the pod is not in the profile's ledger",
}

// Report is what one report holds.
type Report struct {
	Ledger   *Ledger          `json:"ledger"`
	Profiles []string         `json:"profiles"`
	Reasons  []map[string]int `json:"reasons"`
	Entries  []Entry          `json:"-"`
}

// NewReport computes the ledger at now and gathers the decisions.
func (s *Shadow) NewReport(now time.Time, grid *scenario.GridSpec) (*Report, error) {
	l, err := s.Ledger(now, grid)
	if err != nil {
		return nil, err
	}
	r := &Report{Ledger: l, Profiles: s.Profiles(), Entries: s.Entries()}
	r.Reasons = make([]map[string]int, len(r.Profiles))
	for i := range r.Reasons {
		r.Reasons[i] = map[string]int{}
	}
	for _, e := range r.Entries {
		for i, d := range e.Shadow {
			if d.Reason != "" {
				r.Reasons[i][d.Reason]++
			}
		}
	}
	publish(l)
	return r, nil
}

// Run writes a report into dir every period until ctx ends (and a last
// one then); write errors are logged and the next period tries again.
func (s *Shadow) Run(ctx context.Context, dir string, period time.Duration, grid *scenario.GridSpec) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if _, err := s.WriteReport(dir, time.Now().Round(0), grid); err != nil {
				s.logf("last report: %v", err)
			}
			return
		case <-tick.C:
			if out, err := s.WriteReport(dir, time.Now().Round(0), grid); err != nil {
				s.logf("report: %v", err)
			} else {
				s.logf("report written to %s", out)
			}
		}
	}
}

// WriteReport writes the report at now into a new directory of dir,
// shadow-<UTC time> (ledger.csv, placements.csv, summary.json,
// report.html), through a temporary sibling renamed into place, and
// returns its path.
func (s *Shadow) WriteReport(dir string, now time.Time, grid *scenario.GridSpec) (string, error) {
	r, err := s.NewReport(now, grid)
	if err != nil {
		return "", err
	}
	return r.Write(dir)
}

// Write writes r into a new directory of dir named after its end time.
func (r *Report) Write(dir string) (string, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "shadow-"+r.Ledger.To.UTC().Format("20060102T150405Z"))
	if _, err := os.Stat(out); err == nil {
		return "", fmt.Errorf("report directory %s exists", out)
	}
	tmp, err := os.MkdirTemp(dir, ".shadow-tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	files := map[string]func() ([]byte, error){
		"ledger.csv":     r.ledgerCSV,
		"placements.csv": r.placementsCSV,
		"summary.json":   func() ([]byte, error) { return json.MarshalIndent(r, "", "  ") },
		"report.html":    r.html,
	}
	for name, f := range files {
		b, err := f()
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// LedgerRow is one row of ledger.csv and of the report's tables.
type LedgerRow struct {
	Ledger, GroupBy, Group string
	Totals
	// DeltaKWh is the row's energy less the actual ledger's same row
	// (0 for the actual ledger).
	DeltaKWh float64
}

// Rows are the ledger's rows: per book, the total, the idle part, each GPU
// model and each namespace, in name order.
func (l *Ledger) Rows() []LedgerRow {
	var out []LedgerRow
	base := map[string]float64{}
	for bi, b := range l.Books {
		add := func(by, g string, t Totals) {
			k := by + "\x00" + g
			if bi == 0 {
				base[k] = t.KWh
			}
			out = append(out, LedgerRow{Ledger: b.Name, GroupBy: by, Group: g, Totals: t, DeltaKWh: t.KWh - base[k]})
		}
		add("total", "", b.Total)
		add("idle", "", Totals{KWh: b.IdleKWh})
		for _, m := range sortedKeys(b.ByGPUModel) {
			add("gpu_model", m, b.ByGPUModel[m])
		}
		for _, n := range sortedKeys(b.ByNamespace) {
			add("namespace", n, b.ByNamespace[n])
		}
	}
	// Measured: what really ran, by GPU model (energy only).
	byModel := map[string]float64{}
	for _, m := range l.Measured {
		byModel[m.GPUModel] += m.KWh
	}
	for _, m := range sortedKeys(byModel) {
		out = append(out, LedgerRow{Ledger: "measured-" + l.MeasuredScope, GroupBy: "gpu_model", Group: m, Totals: Totals{KWh: byModel[m]}})
	}
	return out
}

func (r *Report) ledgerCSV() ([]byte, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"ledger", "group_by", "group", "energy_kwh", "delta_kwh_vs_actual", "cost_usd", "co2_kg", "pods"})
	for _, row := range r.Ledger.Rows() {
		_ = w.Write([]string{row.Ledger, row.GroupBy, row.Group, f3(row.KWh), f3(row.DeltaKWh), f3(row.CostUSD), f3(row.CO2Kg), strconv.Itoa(row.Pods)})
	}
	w.Flush()
	return []byte(b.String()), w.Error()
}

func (r *Report) placementsCSV() ([]byte, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	head := []string{"namespace", "pod", "bound", "ended", "actual_node", "actual_gpus", "skipped"}
	for _, p := range r.Profiles {
		head = append(head, p+":node", p+":gpus", p+":reason", p+":same_kind", p+":real_best")
	}
	_ = w.Write(head)
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	for _, e := range r.Entries {
		row := []string{e.Namespace, e.Name, ts(e.Bound), ts(e.Ended), e.Actual.Node, gpushare.FormatGPUIndex(e.Actual.GPUs), e.Skipped}
		for i := range r.Profiles {
			if i >= len(e.Shadow) {
				row = append(row, "", "", "", "", "")
				continue
			}
			d := e.Shadow[i]
			row = append(row, d.Node, gpushare.FormatGPUIndex(d.GPUs), d.Reason, strconv.FormatBool(d.SameKind), strings.Join(d.RealBest, " "))
		}
		_ = w.Write(row)
	}
	w.Flush()
	return []byte(b.String()), w.Error()
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f": func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
	"t": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>wattsched shadow report</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}</style></head>
<body><h1>wattsched shadow report</h1>
<p>From {{t .Ledger.From}} to {{t .Ledger.To}}: {{.Ledger.Pods}} pods in the ledger, {{.Ledger.Skipped}} left out; time factor {{.Ledger.Factor}}.
The cluster's own scheduler bound every pod; each profile's counterfactual places the same pods, at the same times and for the same durations, where the profile would have put them on its own shadow state. Energy is the PWR power model's (the simulator's replay accounting); cost and carbon price each ledger's hourly energy.</p>
<h2>Energy, cost and carbon</h2>
<table><tr><th>ledger</th><th>group</th><th></th><th>energy (kWh)</th><th>vs actual (kWh)</th><th>cost (USD)</th><th>carbon (kg CO2eq)</th><th>pods</th></tr>
{{range .Ledger.Rows}}<tr><td>{{.Ledger}}</td><td>{{.GroupBy}}</td><td>{{.Group}}</td><td>{{f .KWh}}</td><td>{{f .DeltaKWh}}</td><td>{{f .CostUSD}}</td><td>{{f .CO2Kg}}</td><td>{{.Pods}}</td></tr>
{{end}}</table>
<h2>Placements that differ</h2>
<table><tr><th>profile</th><th>reason</th><th>pods</th><th>meaning</th></tr>
{{range $i, $p := .Profiles}}{{range $r, $n := index $.Reasons $i}}<tr><td>{{$p}}</td><td>{{$r}}</td><td>{{$n}}</td><td style="text-align:left">{{index $.Texts $r}}</td></tr>
{{end}}{{end}}</table>
</body></html>
`))

func (r *Report) html() ([]byte, error) {
	var b strings.Builder
	err := reportTmpl.Execute(&b, struct {
		*Report
		Texts map[string]string
	}{r, ReasonText})
	return []byte(b.String()), err
}
