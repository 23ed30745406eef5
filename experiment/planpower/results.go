package planpower

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

// StandIn says what stands in for measured power: no public per-node power
// series of a GPU cluster is in the project's trace folder.
const StandIn = "the hourly domain power is the PWR model's estimate of the replayed placements (no measured per-node power series is public: the openb trace lists nodes and pods only); the catalog's error is drawn within its band, not measured on these nodes"

// Results renders a plan: summary.json, plan.csv (every point and
// domain), answers.csv (per-domain mode), one plot per domain and
// report.html, with a table on the terminal and a plain-language summary.
func Results(version string, s *scenario.Scenario, source string, pl *Plan) (*experiment.Results, error) {
	res, err := experiment.NewResults("plan power ("+s.Name+")", version, struct {
		Version  string  `json:"version"`
		Scenario string  `json:"scenario"`
		Source   string  `json:"data_source"`
		StandIn  string  `json:"stand_in"`
		Plan     *Plan   `json:"plan"`
		Risk     float64 `json:"risk"`
	}{version, s.Name, source, StandIn, pl, pl.Options.Risk})
	if err != nil {
		return nil, err
	}
	res.AddStandIns([]string{StandIn})
	o := pl.Options
	res.AddNotes("Data: "+source,
		fmt.Sprintf("Risk %g: the probability, over the hours of the replay x %d seed(s) x %d power-error draw(s), that a domain's hourly power (its highest estimated power in the hour) exceeds its limit. The uncapped replays record each domain's power with the limits lifted; draw 0 is the catalog's figures, each other draw scales every busy GPU's power of a model by a factor uniform within the model's p95 error band (docs/power-models.md), drawn from the seed, the draw and the model's name.", o.Risk, o.Seeds, o.Draws),
		fmt.Sprintf("Added node: %d x %s, %d vCPU, %d GiB (the commonest shape of that model in the cluster).", pl.Add.GPUs, pl.Add.GPUModel, pl.Add.CPUMilli/1000, pl.Add.MemMiB/1024))
	res.Tables = append(res.Tables, domainTable(pl))
	res.Tables = append(res.Tables, searchTable(pl))
	res.Files["plan.csv"] = report.CSV(planRows(pl))
	res.Listing = "summary.json, plan.csv"
	if pl.Answers != nil {
		res.Files["answers.csv"] = report.CSV(answerRows(pl))
		res.Listing += ", answers.csv"
	}
	for d, dom := range pl.Domains {
		svg, err := domainPlot(pl, d)
		if err != nil {
			return nil, err
		}
		file := "domain-" + fileName(dom.Name) + ".svg"
		res.Figures = append(res.Figures, experiment.Figure{File: file, SVG: svg,
			Caption: fmt.Sprintf("%s (%s, limit %.1f kW): hourly highest power (p50, p99, max over hours and seeds, catalog figures; shaded: the p99's range over the power-error draws) against the nodes added", dom.Name, dom.Level, float64(dom.Limit)/1000)})
	}
	res.Listing += fmt.Sprintf(", %d domain-*.svg, report.html", len(pl.Domains))
	res.Summary = summary(pl)
	res.Head = append(res.Head, res.Summary, "")
	return res, nil
}

// fileName keeps a domain name's letters, digits, '-', '_' and '.'.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

func kw(w float64) string { return fmt.Sprintf("%.2f", w/1000) }

func pct(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// fitsText is an answer in nodes: "-" for over already, ">=k" censored.
func fitsText(k int, censored bool) string {
	switch {
	case k < 0:
		return "none"
	case censored:
		return ">=" + strconv.Itoa(k)
	}
	return strconv.Itoa(k)
}

func rangeText(lo, hi, bound int) string {
	f := func(k int) string { return fitsText(k, k == bound) }
	if lo == hi {
		return f(lo)
	}
	return f(lo) + ".." + f(hi)
}

// domainTable is each domain's figures with the current nodes and, per
// domain, its answer.
func domainTable(pl *Plan) report.Table {
	o := pl.Options
	t := report.Table{Title: fmt.Sprintf("Power domains with the current nodes (hourly highest power, kW: catalog figures over %d seed(s) x the replay's hours; p99 range over %d power-error draw(s))", o.Seeds, o.Draws),
		Head: []string{"domain", "level", "nodes", "limit", "p50", "p95", "p99", "max", "p99 over draws", "hours over limit"}}
	if pl.Answers != nil {
		t.Title += fmt.Sprintf("; fits: %s nodes per innermost domain at risk %g", pl.Add.GPUModel, o.Risk)
		t.Head = append(t.Head, "fits", "with parents", "catalog only", "over seeds", "over draws")
	}
	base := pl.Points[0]
	bound := len(pl.Points) - 1
	for d, dom := range pl.Domains {
		dp := base.Domains[d]
		row := []string{dom.Name, dom.Level, strconv.Itoa(nodesIn(pl, d)), kw(float64(dom.Limit)), kw(float64(dp.P50)), kw(float64(dp.P95)), kw(float64(dp.P99)), kw(float64(dp.Max)),
			kw(float64(dp.P99DrawLo)) + ".." + kw(float64(dp.P99DrawHi)), pct(dp.Exceed)}
		if pl.Answers != nil {
			a := pl.Answers[d]
			path := "-"
			if pl.Leaf[d] {
				path = fitsText(a.Path, a.Path == bound && a.Censored)
			}
			row = append(row, fitsText(a.Fits, a.Censored), path, fitsText(a.Catalog, a.Catalog == bound), rangeText(a.SeedLo, a.SeedHi, bound), rangeText(a.DrawLo, a.DrawHi, bound))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// nodesIn is the number of current nodes in domain d (descendants too).
func nodesIn(pl *Plan, d int) int {
	names := map[string]bool{pl.Domains[d].Name: true}
	for changed := true; changed; {
		changed = false
		for _, x := range pl.Domains {
			if names[x.Parent] && !names[x.Name] {
				names[x.Name], changed = true, true
			}
		}
	}
	return pl.Points[0].nodes(names)
}

// searchTable is one row per replayed point.
func searchTable(pl *Plan) report.Table {
	t := report.Table{Title: "Search (each row replayed: uncapped, limits recorded not enforced" + map[bool]string{true: "; capped: limits enforced, catalog figures", false: ""}[pl.Options.Cap] + ")",
		Head: []string{"nodes added", "domains over risk (95% bound)", "worst domain", "its hours over limit", "mean JCT s"}}
	if pl.Options.Cap {
		t.Head = append(t.Head, "capped: nodes left out", "mean JCT s", "JCT cost", "mean wait s", "never started")
	}
	for _, pt := range pl.Points {
		over, worst := 0, 0
		for d, dp := range pt.Domains {
			if dp.Upper > pl.Options.Risk {
				over++
			}
			if dp.Exceed > pt.Domains[worst].Exceed {
				worst = d
			}
		}
		added := strconv.Itoa(pt.Total)
		if pt.PerLeaf >= 0 {
			added = fmt.Sprintf("%d per domain (%d)", pt.PerLeaf, pt.Total)
		}
		row := []string{added, strconv.Itoa(over), pl.Domains[worst].Name, pct(pt.Domains[worst].Exceed), fmt.Sprintf("%.0f", pt.JCTS)}
		if c := pt.Capped; c != nil {
			row = append(row, strconv.Itoa(c.LeftOut), fmt.Sprintf("%.0f", c.JCTS), fmt.Sprintf("%+.2f%%", 100*(c.JCTS-pt.JCTS)/pt.JCTS), fmt.Sprintf("%.1f", c.WaitS), fmt.Sprintf("%.1f", c.Unstarted))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func planRows(pl *Plan) [][]string {
	rows := [][]string{{"nodes_added", "per_domain", "domain", "limit_w", "added_here", "hours", "exceed", "exceed_catalog", "exceed_seed_lo", "exceed_seed_hi", "exceed_draw_lo", "exceed_draw_hi",
		"p50_w", "p95_w", "p99_w", "max_w", "p99_draw_lo_w", "p99_draw_hi_w", "exceed_upper95", "mean_jct_s", "capped_left_out", "capped_mean_jct_s", "capped_never_started"}}
	f := report.F
	for _, pt := range pl.Points {
		cl, cj, cu := "", "", ""
		if c := pt.Capped; c != nil {
			cl, cj, cu = strconv.Itoa(c.LeftOut), f(c.JCTS), f(c.Unstarted)
		}
		for d, dp := range pt.Domains {
			slo, shi := minMax(dp.Seeds)
			dlo, dhi := minMax(dp.Draws)
			rows = append(rows, []string{strconv.Itoa(pt.Total), strconv.Itoa(pt.PerLeaf), pl.Domains[d].Name, f(float64(pl.Domains[d].Limit)), strconv.Itoa(pt.Added[d]), strconv.Itoa(pt.Hours),
				f(dp.Exceed), f(dp.Catalog), f(slo), f(shi), f(dlo), f(dhi),
				f(float64(dp.P50)), f(float64(dp.P95)), f(float64(dp.P99)), f(float64(dp.Max)), f(float64(dp.P99DrawLo)), f(float64(dp.P99DrawHi)), f(dp.Upper), f(pt.JCTS), cl, cj, cu})
		}
	}
	return rows
}

func answerRows(pl *Plan) [][]string {
	rows := [][]string{{"domain", "level", "limit_w", "risk", "fits", "censored", "with_parents", "catalog_only", "seed_lo", "seed_hi", "draw_lo", "draw_hi"}}
	for d, a := range pl.Answers {
		path := ""
		if pl.Leaf[d] {
			path = strconv.Itoa(a.Path)
		}
		rows = append(rows, []string{pl.Domains[d].Name, pl.Domains[d].Level, report.F(float64(pl.Domains[d].Limit)), report.F(pl.Options.Risk), strconv.Itoa(a.Fits), strconv.FormatBool(a.Censored), path,
			strconv.Itoa(a.Catalog), strconv.Itoa(a.SeedLo), strconv.Itoa(a.SeedHi), strconv.Itoa(a.DrawLo), strconv.Itoa(a.DrawHi)})
	}
	return rows
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// domainPlot draws domain d's hourly highest power against the nodes
// added, with its limit.
func domainPlot(pl *Plan, d int) ([]byte, error) {
	var p50, p99, mx, lim report.Series
	p50.Name, p99.Name, mx.Name, lim.Name = "p50", "p99 (shaded: over draws)", "max", "limit"
	for _, pt := range pl.Points {
		x := float64(pt.Total)
		if pt.PerLeaf >= 0 {
			x = float64(pt.PerLeaf)
		}
		dp := pt.Domains[d]
		p50.X, p50.Y = append(p50.X, x), append(p50.Y, float64(dp.P50)/1000)
		p99.X, p99.Y = append(p99.X, x), append(p99.Y, float64(dp.P99)/1000)
		p99.Lo, p99.Hi = append(p99.Lo, float64(dp.P99DrawLo)/1000), append(p99.Hi, float64(dp.P99DrawHi)/1000)
		mx.X, mx.Y = append(mx.X, x), append(mx.Y, float64(dp.Max)/1000)
		lim.X, lim.Y = append(lim.X, x), append(lim.Y, float64(pl.Domains[d].Limit)/1000)
	}
	xl := "nodes added to the cluster"
	if pl.Answers != nil {
		xl = "nodes added to each innermost domain"
	}
	return report.LinePlot{Title: pl.Domains[d].Name + ": hourly highest power", XLabel: xl, YLabel: "power (kW)", Series: []report.Series{p50, p99, mx, lim}}.SVG()
}

// summary is the plain-language paragraph.
func summary(pl *Plan) string {
	o := pl.Options
	base := pl.Points[0]
	var over []string
	for d, dp := range base.Domains {
		if dp.Upper > o.Risk {
			over = append(over, fmt.Sprintf("%s (%s of hours, 95%% bound %s)", pl.Domains[d].Name, pct(dp.Exceed), pct(dp.Upper)))
		}
	}
	node := fmt.Sprintf("%d x %s node", pl.Add.GPUs, pl.Add.GPUModel)
	var b strings.Builder
	fmt.Fprintf(&b, "With the current nodes, ")
	if len(over) == 0 {
		fmt.Fprintf(&b, "every domain's hourly power stays within its limit in all but at most %g of the hours (95%% bound over %d seed(s) and %d power-error draw(s)). ", o.Risk, o.Seeds, o.Draws)
	} else {
		fmt.Fprintf(&b, "%d domain(s) exceed their limit, or cannot be shown not to, in more than %g of the hours: %s. ", len(over), o.Risk, strings.Join(over, ", "))
	}
	bound := len(pl.Points) - 1
	if pl.Answers != nil {
		lo, hi, loName := math.MaxInt, -1, ""
		for d, a := range pl.Answers {
			if !pl.Leaf[d] {
				continue
			}
			if a.Path < lo {
				lo, loName = a.Path, pl.Domains[d].Name
			}
			hi = max(hi, a.Path)
		}
		fmt.Fprintf(&b, "Adding %ss to every innermost domain at once, each can take between %s (%s) and %s such nodes with its parents staying within risk %g; ",
			node, fitsText(lo, false), loName, fitsText(hi, hi == bound && hi == o.MaxAdd), o.Risk)
		fmt.Fprintf(&b, "the answers are replayed, not extrapolated, and the table gives each domain's range over the seeds and over the catalog's power-error draws, which is the larger uncertainty. ")
	} else if ov := pl.Overall; ov != nil {
		fmt.Fprintf(&b, "Spread round robin over the %d innermost domains with room (most headroom first), the cluster can take %s %ss with every domain that is within the risk today staying within it. ",
			len(ov.Order), fitsText(ov.Fits, ov.Censored), node)
	}
	if o.Cap {
		fmt.Fprintf(&b, "With capping (the limits enforced, work waiting instead), no limit is exceeded by construction; the search table gives what it costs in completion time at each point. ")
	}
	fmt.Fprintf(&b, "All power figures are estimates: %s.", StandIn)
	return b.String()
}
