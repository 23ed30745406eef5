package tasks

import (
	"fmt"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/report"
)

// DomainsFile is the per-domain power report a run with a topology writes.
const DomainsFile = "domains.csv"

// DomainReport is one power domain's estimated power over a run
// (power.DomainSummary in the units of the results).
type DomainReport struct {
	Name   string         `json:"name"`
	Level  string         `json:"level,omitempty"`
	LimitW experiment.Num `json:"limit_w"`
	Nodes  int            `json:"nodes"`
	MeanW  experiment.Num `json:"mean_w"`
	P50W   experiment.Num `json:"p50_w"`
	P99W   experiment.Num `json:"p99_w"`
	PeakW  experiment.Num `json:"peak_w"`
	// AboveS is the time spent strictly above Threshold times the limit,
	// and AboveShare that time over the run's.
	AboveS     experiment.Num `json:"above_s"`
	AboveShare experiment.Num `json:"above_share"`
	Threshold  experiment.Num `json:"above_threshold"`
}

// domainReports converts an engine's domain summaries (nil: none).
func domainReports(sums []power.DomainSummary, above float64) []DomainReport {
	var out []DomainReport
	for _, d := range sums {
		r := DomainReport{Name: d.Name, Level: d.Level, LimitW: experiment.Num(d.Limit), Nodes: d.Nodes,
			MeanW: experiment.Num(d.Mean), P50W: experiment.Num(d.P50), P99W: experiment.Num(d.P99), PeakW: experiment.Num(d.Peak),
			AboveS: experiment.Num(d.Above), Threshold: experiment.Num(above)}
		if d.Seconds > 0 {
			r.AboveShare = experiment.Num(d.Above / d.Seconds)
		}
		out = append(out, r)
	}
	return out
}

// domainHead is domains.csv's header after its leading columns.
var domainHead = []string{"domain", "level", "limit_w", "nodes", "mean_w", "p50_w", "p99_w", "peak_w", "above_threshold", "above_s", "above_share"}

func domainRow(lead []string, d DomainReport) []string {
	f := func(v experiment.Num) string { return report.F(float64(v)) }
	return append(append([]string(nil), lead...), d.Name, d.Level, f(d.LimitW), strconv.Itoa(d.Nodes), f(d.MeanW), f(d.P50W), f(d.P99W), f(d.PeakW),
		f(d.Threshold), f(d.AboveS), f(d.AboveShare))
}

// domainTable is the terminal's table of the domains' power per run.
// what says what the figures are over.
func domainTable(what string, lead []string) report.Table {
	return report.Table{Title: fmt.Sprintf("Power domains (estimated power; %s)", what),
		Head: append(append([]string(nil), lead...), "domain", "limit kW", "mean kW", "p99 kW", "peak kW", "peak / limit", "time above")}
}

func domainTableRow(lead []string, d DomainReport) []string {
	kw := func(v experiment.Num) string { return fmt.Sprintf("%.1f", float64(v)/1000) }
	return append(append([]string(nil), lead...), d.Name, kw(d.LimitW), kw(d.MeanW), kw(d.P99W), kw(d.PeakW),
		fmt.Sprintf("%.3f", float64(d.PeakW/d.LimitW)), fmt.Sprintf("%.1f%%", 100*float64(d.AboveShare)))
}

// meanDomains is the seeds' reports of each domain (per[seed][domain], the
// same domains in each): the mean of each figure, but the highest peak.
func meanDomains(per [][]DomainReport) []DomainReport {
	if len(per) == 0 || len(per[0]) == 0 {
		return nil
	}
	out := append([]DomainReport(nil), per[0]...)
	n := experiment.Num(len(per))
	for j := range out {
		o := &out[j]
		o.MeanW, o.P50W, o.P99W, o.AboveS, o.AboveShare = 0, 0, 0, 0, 0
		for _, seed := range per {
			d := seed[j]
			o.MeanW += d.MeanW / n
			o.P50W += d.P50W / n
			o.P99W += d.P99W / n
			o.AboveS += d.AboveS / n
			o.AboveShare += d.AboveShare / n
			o.PeakW = max(o.PeakW, d.PeakW)
		}
	}
	return out
}
