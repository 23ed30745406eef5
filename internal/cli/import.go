package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace/k8sdump"
)

// importShown is how many warnings and skipped pods import prints (the
// report lists up to importListed).
const importShown, importListed = 20, 1000

// printImportWarnings prints the pods skipped and the pods and nodes kept
// with a change, one line each, up to importShown of each.
func printImportWarnings(stderr io.Writer, d *k8sdump.Dump) {
	for i, s := range d.Skipped {
		if i == importShown {
			fmt.Fprintf(stderr, "warning: ... and %d more skipped pods (report.html lists them)\n", len(d.Skipped)-i)
			break
		}
		fmt.Fprintf(stderr, "warning: skipped %s pod %s: %s\n", s.Item, s.Pod, s.Reason)
	}
	for i, w := range d.Warnings {
		if i == importShown {
			fmt.Fprintf(stderr, "warning: ... and %d more (report.html lists them)\n", len(d.Warnings)-i)
			break
		}
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
}

// importResults is what import k8s writes and prints: the files and a
// report of what was imported (nodes by GPU model, pods by phase, MIG
// capacity, skipped pods and warnings).
func importResults(d *k8sdump.Dump, name string, unknown []string, timesLine string) *experiment.Results {
	dur := d.Durations()
	res := &experiment.Results{Title: "wattsched import k8s: " + name, Files: d.Files(filepath.Base(name), unknown), Listing: "nodes.csv, pods.csv, scenario.yaml, report.html",
		Head: []string{fmt.Sprintf("%d nodes and %d pods from %s", len(d.Nodes), len(d.Pods), name)}}
	if len(d.Skipped) > 0 {
		res.Head = append(res.Head, fmt.Sprintf("%d pods skipped (warnings above; --strict makes them errors)", len(d.Skipped)))
	}
	if len(d.Pods) == 0 {
		res.Head = append(res.Head, "no pods to schedule (every pod is a system pod, skipped, or none): pods.csv has no rows and scenario.yaml does not run until it has some")
	}
	reserved := 0
	for _, s := range d.System {
		if s.Reserved {
			reserved++
		}
	}
	if len(d.System) > 0 {
		res.Head = append(res.Head, fmt.Sprintf("%d system pods (DaemonSet, static, mirror, system namespaces) kept out of the jobs: %d reserved on %d nodes (their requests taken off the nodes' allocatable), %d not reserved (ended or not bound)",
			len(d.System), reserved, len(d.Reserved), len(d.System)-reserved))
	}
	if len(d.Taints) > 0 {
		intolerant := map[string]bool{}
		for _, nt := range d.Taints {
			for _, p := range nt.Intolerant {
				intolerant[p] = true
			}
		}
		res.Head = append(res.Head, fmt.Sprintf("taints not honoured by the replay: %d nodes have NoSchedule/NoExecute taints, %d pods do not tolerate some of them and may be placed there (table below)", len(d.Taints), len(intolerant)))
	}
	if timesLine != "" {
		res.Head = append(res.Head, timesLine)
	}
	res.Head = append(res.Head, fmt.Sprintf("durations: %d pods ran and ended (their real durations), %d still running (cut at the snapshot %s), %d never started",
		dur.Ended, dur.Running, d.Snapshot.UTC().Format(time.RFC3339), dur.NotStarted), "")
	res.Notes = []string{
		"nodes.csv and pods.csv are openb lists (docs/formats.md); scenario.yaml compares FGD, PWR, 0.1*PWR+0.9*FGD and BestFit on them, by replay when pods have run times, else by inflation.",
		fmt.Sprintf("Snapshot: %s, the latest time the dump holds. Pods still running are replayed from their start up to it.", d.Snapshot.UTC().Format(time.RFC3339)),
		"A pod asking for one MIG device becomes a request for one instance of its profile (pods.csv mig_profile; hw/mig.yaml), and MIG nodes whose GPUs are all in MIG mode keep their layouts (scenario.yaml mig); a pod with several devices, or of a profile hw/mig.yaml lacks, counts as the share of a GPU their compute slices are (slices/7, or /4 on an A30, in thousandths rounded down); the profile table's source: " + k8sdump.MIGSource + ".",
	}
	res.Tables = append(res.Tables, report.Table{Title: "Pods kept, reserved and skipped", Head: []string{"pods", "count", "where"},
		Rows: [][]string{
			{"kept as jobs", strconv.Itoa(len(d.Pods)), "pods.csv"},
			{"system, reserved", strconv.Itoa(reserved), "their requests taken off their nodes' allocatable in nodes.csv"},
			{"system, not reserved", strconv.Itoa(len(d.System) - reserved), "ended or not bound to a node of the dump: left out"},
			{"skipped", strconv.Itoa(len(d.Skipped)), "unreadable or not modelled: left out (warnings)"},
		}})
	if len(d.Reserved) > 0 {
		t := report.Table{Title: "Reserved by system pods", Head: []string{"node", "system pods", "milli-CPU reserved", "of", "MiB reserved", "of", "GPU requested, not reserved"}}
		for _, r := range d.Reserved {
			t.Rows = append(t.Rows, []string{r.Node, strconv.Itoa(r.Pods), strconv.FormatInt(r.CPUMilli, 10), strconv.FormatInt(r.AllocCPUMilli, 10),
				strconv.FormatInt(r.MemMiB, 10), strconv.FormatInt(r.AllocMemMiB, 10), fmt.Sprintf("%.3f", float64(r.GPUMilli)/1000)})
		}
		res.Tables = append(res.Tables, t)
	}
	if len(d.Taints) > 0 {
		t := report.Table{Title: "Taints the replay does not honour", Head: []string{"node", "NoSchedule/NoExecute taints", "pods not tolerating them"}}
		for _, nt := range d.Taints {
			var ts []string
			for _, x := range nt.Taints {
				ts = append(ts, x.String())
			}
			t.Rows = append(t.Rows, []string{nt.Node, strings.Join(ts, ", "), strconv.Itoa(len(nt.Intolerant))})
		}
		res.Tables = append(res.Tables, t)
	}
	// Nodes by GPU model.
	type modelRow struct{ nodes, gpus, mig int }
	byModel := map[string]*modelRow{}
	migNodes := map[string]bool{}
	for _, m := range d.MIG {
		migNodes[m.Node] = true
	}
	var models []string
	for _, n := range d.Nodes {
		m := n.GPUModel
		if m == "" {
			m = "(CPU only)"
		}
		if byModel[m] == nil {
			byModel[m] = &modelRow{}
			models = append(models, m)
		}
		byModel[m].nodes++
		byModel[m].gpus += n.GPUs
		if migNodes[n.Name] {
			byModel[m].mig++
		}
	}
	slices.Sort(models)
	cat := hw.Default()
	nodes := report.Table{Title: "Nodes by GPU model", Head: []string{"model", "nodes", "GPUs", "with MIG", "in the catalog"}}
	for _, m := range models {
		in := "yes"
		switch {
		case m == "(CPU only)":
			in = "-"
		case slices.Contains(unknown, m):
			in = "no: hardware stub in scenario.yaml"
		default:
			if g, err := cat.GPU(m); err == nil && g.Name != m {
				in = "yes (" + g.Name + ")"
			}
		}
		r := byModel[m]
		nodes.Rows = append(nodes.Rows, []string{m, strconv.Itoa(r.nodes), strconv.Itoa(r.gpus), strconv.Itoa(r.mig), in})
	}
	res.Tables = append(res.Tables, nodes)
	// Pods by phase.
	type phaseRow struct{ pods, ended, running, notStarted, gpu, mig int }
	byPhase := map[string]*phaseRow{}
	var phases []string
	for _, p := range d.Pods {
		ph := p.Phase
		if ph == "" {
			ph = "(none)"
		}
		if byPhase[ph] == nil {
			byPhase[ph] = &phaseRow{}
			phases = append(phases, ph)
		}
		r := byPhase[ph]
		r.pods++
		switch {
		case p.Start.IsZero():
			r.notStarted++
		case p.End.IsZero():
			r.running++
		default:
			r.ended++
		}
		if p.Demand.GPUCount > 0 {
			r.gpu++
		}
		if p.MIG != "" {
			r.mig++
		}
	}
	slices.Sort(phases)
	pods := report.Table{Title: "Pods by phase", Head: []string{"phase", "pods", "ran and ended", "running at the snapshot", "never started", "asking for GPUs", "of them MIG"}}
	for _, ph := range phases {
		r := byPhase[ph]
		pods.Rows = append(pods.Rows, []string{ph, strconv.Itoa(r.pods), strconv.Itoa(r.ended), strconv.Itoa(r.running), strconv.Itoa(r.notStarted), strconv.Itoa(r.gpu), strconv.Itoa(r.mig)})
	}
	res.Tables = append(res.Tables, pods)
	if len(d.MIG) > 0 {
		t := report.Table{Title: "MIG capacity", Head: []string{"node", "strategy", "MIG devices", "GPUs counted"}}
		for _, m := range d.MIG {
			t.Rows = append(t.Rows, []string{m.Node, m.Strategy, strings.Join(m.Instances, ", "), strconv.Itoa(m.GPUs)})
		}
		res.Tables = append(res.Tables, t)
	}
	if len(unknown) > 0 {
		res.Tail = []string{fmt.Sprintf("GPU models not in the catalog: %s: fill in the hardware stub at the end of scenario.yaml before running it (docs/scenarios.md)", strings.Join(unknown, ", ")), ""}
	}
	// The lists go in report.html only (the terminal gets the warnings).
	page := &experiment.Results{}
	if len(d.System) > 0 {
		t := report.Table{Title: fmt.Sprintf("System pods kept out of the jobs (%d)", len(d.System)), Head: []string{"item", "pod", "why", "node", "phase", "reserved"}}
		for i, s := range d.System {
			if i == importListed {
				t.Rows = append(t.Rows, []string{"...", fmt.Sprintf("%d more", len(d.System)-i), "", "", "", ""})
				break
			}
			r := "no"
			if s.Reserved {
				r = "yes"
			}
			t.Rows = append(t.Rows, []string{s.Item, s.Pod, s.Why, s.Node, s.Phase, r})
		}
		page.Tables = append(page.Tables, t)
	}
	if len(d.Taints) > 0 {
		// One row per set of taints: the nodes that have it, the pods that
		// do not tolerate it.
		t := report.Table{Title: "Pods that do not tolerate a node's taints (the replay may place them there)", Head: []string{"taints", "nodes", "pods"}}
		var sets []string
		nodesOf, podsOf := map[string][]string{}, map[string][]string{}
		for _, nt := range d.Taints {
			var ts []string
			for _, x := range nt.Taints {
				ts = append(ts, x.String())
			}
			k := strings.Join(ts, ", ")
			if _, ok := nodesOf[k]; !ok {
				sets = append(sets, k)
				podsOf[k] = nt.Intolerant
			}
			nodesOf[k] = append(nodesOf[k], nt.Node)
		}
		cut := func(l []string) string {
			if len(l) > importListed {
				return strings.Join(l[:importListed], ", ") + fmt.Sprintf(", ... %d more", len(l)-importListed)
			}
			return strings.Join(l, ", ")
		}
		for _, k := range sets {
			t.Rows = append(t.Rows, []string{k, cut(nodesOf[k]), cut(podsOf[k])})
		}
		page.Tables = append(page.Tables, t)
	}
	if len(d.Skipped) > 0 {
		t := report.Table{Title: fmt.Sprintf("Skipped pods (%d)", len(d.Skipped)), Head: []string{"item", "pod", "why"}}
		for i, s := range d.Skipped {
			if i == importListed {
				t.Rows = append(t.Rows, []string{"...", fmt.Sprintf("%d more", len(d.Skipped)-i), ""})
				break
			}
			t.Rows = append(t.Rows, []string{s.Item, s.Pod, s.Reason})
		}
		page.Tables = append(page.Tables, t)
	}
	if len(d.Warnings) > 0 {
		t := report.Table{Title: fmt.Sprintf("Kept with a warning (%d)", len(d.Warnings)), Head: []string{"warning"}}
		for i, w := range d.Warnings {
			if i == importListed {
				t.Rows = append(t.Rows, []string{fmt.Sprintf("... %d more", len(d.Warnings)-i)})
				break
			}
			t.Rows = append(t.Rows, []string{w})
		}
		page.Tables = append(page.Tables, t)
	}
	res.PageTables = page.Tables
	return res
}

// podTimesQuery selects kube-state-metrics' pod start and completion
// times (gauges of Unix seconds, labelled namespace and pod).
const podTimesQuery = `{__name__=~"kube_pod_start_time|kube_pod_completion_time"}`

// importTimes is where import k8s takes pods' times from besides the
// dump: a Prometheus range query, a saved answer of one, or nothing.
type importTimes struct {
	client     *prom.Client
	start, end time.Time
	step       time.Duration
	url        string
	// times are the saved answer's (--pod-times), by namespace/name.
	times map[string]k8sdump.PodTime
	from  string
	// line says what the times changed, for the output.
	line string
	// strict makes a time outside the window an error; warns are those
	// left out otherwise.
	strict bool
	warns  []string
}

// newImportTimes checks the flags and reads a saved answer, before any
// work.
func newImportTimes(url, rng, file string, strict bool) (*importTimes, error) {
	switch {
	case url != "" && file != "":
		return nil, usageError{errors.New("import k8s: give one of --prometheus and --pod-times")}
	case (url != "") != (rng != ""):
		return nil, usageError{errors.New("import k8s: --prometheus URL goes with --range START,END[,STEP]")}
	}
	it := &importTimes{strict: strict}
	if url != "" {
		start, end, step, err := parseRange(rng)
		if err != nil {
			return nil, usageError{fmt.Errorf("import k8s --range: %w", err)}
		}
		c, err := prom.NewClient(url, 30*time.Second)
		if err != nil {
			return nil, usageError{fmt.Errorf("import k8s --prometheus: %w", err)}
		}
		it.client, it.start, it.end, it.step, it.url = c, start, end, step, url
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		series, err := prom.ParseRange(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if it.times, it.warns, err = podTimesFromSeries(series, strict); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		it.from = file
	}
	return it, nil
}

// fill queries Prometheus when asked and completes the dump's times.
func (it *importTimes) fill(ctx context.Context, d *k8sdump.Dump) error {
	if it.client != nil {
		series, err := it.client.QueryRange(ctx, podTimesQuery, it.start, it.end, it.step)
		if err != nil {
			return fmt.Errorf("%s: %w", it.url, err)
		}
		if it.times, it.warns, err = podTimesFromSeries(series, it.strict); err != nil {
			return fmt.Errorf("%s: %w", it.url, err)
		}
		it.from = fmt.Sprintf("%s %s..%s", it.url, it.start.UTC().Format(time.RFC3339), it.end.UTC().Format(time.RFC3339))
	}
	if it.times == nil {
		return nil
	}
	d.Warnings = append(d.Warnings, it.warns...)
	n := d.FillTimes(it.times)
	it.line = fmt.Sprintf("kube-state-metrics times from %s: %d pods in the series, %d pods of the dump got a start or an end from them", it.from, len(it.times), n)
	if len(it.warns) > 0 {
		it.line += fmt.Sprintf("; %d times outside the window left out (warnings above; --strict makes them errors)", len(it.warns))
	}
	return nil
}

// podTimesFromSeries reads kube_pod_start_time and
// kube_pod_completion_time series (the last value of each: Unix seconds)
// by namespace/pod; of a name's several pods (recreated, another uid) the
// latest times are kept. A time outside the window dumps may hold (a zero
// Unix time is an unset one) is left out with a warning naming the series,
// or with strict is the error.
func podTimesFromSeries(series []prom.Series, strict bool) (map[string]k8sdump.PodTime, []string, error) {
	out := map[string]k8sdump.PodTime{}
	var warns []string
	for i, s := range series {
		metric, ns, pod := s.Labels["__name__"], s.Labels["namespace"], s.Labels["pod"]
		if metric != "kube_pod_start_time" && metric != "kube_pod_completion_time" {
			continue
		}
		if ns == "" || pod == "" || len(s.Points) == 0 {
			return nil, nil, fmt.Errorf("series %d (%s): want namespace and pod labels and a value", i, metric)
		}
		v := s.Points[len(s.Points)-1].Value
		if math.IsNaN(v) || v < 0 || v > 1<<40 {
			return nil, nil, fmt.Errorf("series %d (%s{namespace=%q, pod=%q}): %v is not a Unix time in seconds", i, metric, ns, pod, v)
		}
		sec, frac := math.Modf(v)
		t := time.Unix(int64(sec), int64(frac*1e9)).UTC()
		if !k8sdump.InWindow(t) {
			err := fmt.Errorf("series %d (%s{namespace=%q, pod=%q}): %v (%s) is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z", i, metric, ns, pod, v, t.Format(time.RFC3339))
			if strict {
				return nil, nil, err
			}
			warns = append(warns, err.Error()+": left out")
			continue
		}
		pt := out[ns+"/"+pod]
		if metric == "kube_pod_start_time" {
			if t.After(pt.Start) {
				pt.Start = t
			}
		} else if t.After(pt.End) {
			pt.End = t
		}
		out[ns+"/"+pod] = pt
	}
	return out, warns, nil
}
