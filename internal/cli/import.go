package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
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
func importResults(d *k8sdump.Dump, name string, unknown []string) *experiment.Results {
	dur := d.Durations()
	res := &experiment.Results{Title: "wattsched import k8s: " + name, Files: d.Files(filepath.Base(name), unknown), Listing: "nodes.csv, pods.csv, scenario.yaml, report.html",
		Head: []string{fmt.Sprintf("%d nodes and %d pods from %s", len(d.Nodes), len(d.Pods), name)}}
	if len(d.Skipped) > 0 {
		res.Head = append(res.Head, fmt.Sprintf("%d pods skipped (warnings above; --strict makes them errors)", len(d.Skipped)))
	}
	res.Head = append(res.Head, fmt.Sprintf("durations: %d pods ran and ended (their real durations), %d still running (cut at the snapshot %s), %d never started",
		dur.Ended, dur.Running, d.Snapshot.UTC().Format(time.RFC3339), dur.NotStarted), "")
	res.Notes = []string{
		"nodes.csv and pods.csv are openb lists (docs/formats.md); scenario.yaml compares FGD, PWR, 0.1*PWR+0.9*FGD and BestFit on them, by replay when pods have run times, else by inflation.",
		fmt.Sprintf("Snapshot: %s, the latest time the dump holds. Pods still running are replayed from their start up to it.", d.Snapshot.UTC().Format(time.RFC3339)),
		"MIG devices count as the share of a GPU their compute slices are (slices/7, or /4 on an A30, in thousandths rounded down); the profile table's source: " + k8sdump.MIGSource + ".",
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
