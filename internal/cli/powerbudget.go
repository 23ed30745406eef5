package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/k8sdump"
	"github.com/wattsched/wattsched/userfile"
)

// This file is `wattsched budget`: the power budget (PowerBudget's
// budgetWatts) a cluster's own hardware suggests. It has nothing to do
// with budget.go, the memory bound of a run (--max-memory).

// defaultBudgetShare is the share of the cluster's dynamic range (full
// minus baseline power) that the suggested budget adds to the baseline.
// Half: the budget then holds pods back only once more than half of the
// range the PWR model can count is in use, and a first install never
// refuses the cluster's first pods; docs/kubernetes.md, "Choosing
// budgetWatts", says how to tighten it from a replay of the cluster's
// workload.
const defaultBudgetShare = 0.5

// powerBudgetFlags are budget's flags.
type powerBudgetFlags struct {
	in, kubeconfig, kcontext, nodes, catalog, values string
	share                                            float64
	force                                            bool
	systemNS                                         []string
}

func (a *app) powerBudgetCmd() *cobra.Command {
	var f powerBudgetFlags
	c := &cobra.Command{Use: "budget (-f cluster.json | --kubeconfig FILE [--context NAME] | --nodes openb-gpu|FILE) [--share S] [--values FILE]",
		Short: "a cluster's modelled idle and full power, and a budgetWatts for PowerBudget",
		Long: `Read a cluster's nodes (a 'kubectl get nodes,pods -A -o json' dump, a live
cluster through a kubeconfig, or a scenario's node list) and the hardware
catalog, and print the power the PWR model (the one PowerBudget counts) gives
the cluster: idle (every node empty), baseline (idle plus the CPU the
cluster's system pods request, which PowerBudget counts as busy) and full
(every CPU socket and GPU at its TDP), per GPU model and in total, with the
catalog entries used and the nodes the catalog does not know (PowerBudget
cannot model them and leaves them out; give their hardware with --catalog).
Then a budgetWatts: baseline + share x (full - baseline), with --share (default
0.5). --values writes it as a values file of the wattsched-scheduler chart.
This is not --max-memory, the memory bound of a run.`,
		Example: `  kubectl get nodes,pods -A -o json | wattsched budget -f -
  wattsched budget --kubeconfig ~/.kube/config --context prod --values budget-values.yaml
  wattsched budget --nodes openb-gpu --share 0.25`,
		DisableFlagsInUseLine: true, Args: noArgs}
	fs := c.Flags()
	fs.StringVarP(&f.in, "f", "f", "", "the JSON of 'kubectl get nodes,pods -A -o json' (- for standard input)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "read the nodes and pods of a live cluster through this kubeconfig file")
	fs.StringVar(&f.kcontext, "context", "", "with --kubeconfig: the context to use (default: the file's current-context)")
	fs.StringVar(&f.nodes, "nodes", "", "a scenario's node list instead: openb-gpu, openb-all or an openb nodes CSV file (import k8s's nodes.csv)")
	fs.StringVar(&f.catalog, "catalog", "", "extra hardware catalog entries (calibrate's output; the chart's extraCatalog) for models the built-in catalog lacks")
	fs.Float64Var(&f.share, "share", defaultBudgetShare, "the share of the dynamic range (full - baseline) the suggested budget adds to the baseline, 0..1")
	fs.StringVar(&f.values, "values", "", "also write the suggestion as a Helm values file of charts/wattsched-scheduler")
	fs.BoolVar(&f.force, "force", false, "replace an existing --values file (never a symbolic link or a file inside a result)")
	fs.StringSliceVar(&f.systemNS, "system-namespace", nil, "a namespace whose pods are the cluster's own, like kube-system's (repeat or comma-separate)")
	c.MarkFlagFilename("f", "json")
	c.MarkFlagFilename("values", "yaml")
	c.RunE = func(*cobra.Command, []string) error { return cmdPowerBudget(a.ctx, f, a.stdout, a.stderr) }
	return c
}

// budgetNode is a node as the budget counts it: its spec at its
// allocatable, and the CPU its system pods request (counted as busy).
type budgetNode struct {
	spec             cluster.NodeSpec
	systemCPUMilli   int64
	systemPodsOnNode int
}

// budgetRow is one GPU model's nodes.
type budgetRow struct {
	model, entry       string
	nodes, gpus        int
	idle, base, full   hw.Watts
	cpuIdleW, cpuTDPW  hw.Watts
	gpuIdleW, gpuTDPW  hw.Watts
	cpuModel, gpuModel string
}

// budgetUnknown is a node the catalog does not know.
type budgetUnknown struct {
	node, why string
}

// clusterPower is what budget prints: the cluster's figures by GPU model
// and in total, over the nodes the catalog knows.
type clusterPower struct {
	rows              []budgetRow
	unknown           []budgetUnknown
	idle, base, full  hw.Watts
	nodes, systemPods int
}

// modelClusterPower counts each node of nodes with the PWR model of cat:
// idle (empty), baseline (its system pods' CPU requests allocated) and
// full (power.TDP). A node whose GPU or CPU model cat lacks is listed in
// unknown and left out of the figures, as PowerBudget leaves out a node
// it cannot model. Rows are sorted by model name; the figures do not
// depend on the order of nodes.
func modelClusterPower(cat *hw.Catalog, nodes []budgetNode) (*clusterPower, error) {
	cp := &clusterPower{}
	rows := map[string]*budgetRow{}
	// Count in name order, so that no sum depends on the input's order.
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b budgetNode) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	for _, bn := range nodes {
		c, err := cluster.New(cat, []cluster.NodeSpec{bn.spec})
		if err != nil {
			if bn.spec.CPUMilli <= 0 || bn.spec.GPUs < 0 || bn.spec.MemMiB < 0 {
				return nil, err
			}
			why := "not in the catalog: left out (PowerBudget cannot model it either); give its hardware with --catalog"
			if bn.spec.GPUs > 0 {
				if _, gerr := cat.GPU(bn.spec.GPUModel); gerr != nil {
					why = fmt.Sprintf("GPU model %q (%d GPUs) %s", bn.spec.GPUModel, bn.spec.GPUs, why)
				}
			}
			cp.unknown = append(cp.unknown, budgetUnknown{node: bn.spec.Name, why: why})
			continue
		}
		n := c.Nodes[0]
		idle, full := power.Idle(n), power.TDP(n)
		sys := min(bn.systemCPUMilli, n.CPUMilli)
		base := idle - power.CPUPower(n.CPU, n.CPUMilli, n.CPUMilli) + power.CPUPower(n.CPU, n.CPUMilli, n.CPUMilli-sys)
		key := "(CPU only)"
		if n.GPU != nil {
			key = n.GPU.Name
		}
		key += " / " + n.CPU.Name
		r := rows[key]
		if r == nil {
			r = &budgetRow{model: key, cpuModel: n.CPU.Name, cpuIdleW: n.CPU.IdleW, cpuTDPW: n.CPU.TDPW}
			if n.GPU != nil {
				r.gpuModel, r.gpuIdleW, r.gpuTDPW = n.GPU.Name, n.GPU.IdleW, n.GPU.TDPW
			}
			rows[key] = r
		}
		r.nodes++
		r.gpus += len(n.GPUFree)
		r.idle += idle
		r.base += base
		r.full += full
		cp.nodes++
		cp.systemPods += bn.systemPodsOnNode
	}
	for _, r := range rows {
		cp.rows = append(cp.rows, *r)
	}
	slices.SortFunc(cp.rows, func(a, b budgetRow) int { return strings.Compare(a.model, b.model) })
	// Sum in the sorted order, so the totals do not depend on the input's.
	for _, r := range cp.rows {
		cp.idle += r.idle
		cp.base += r.base
		cp.full += r.full
	}
	return cp, nil
}

// suggestBudget is baseline + share x (full - baseline), rounded up to a
// whole watt.
func suggestBudget(cp *clusterPower, share float64) hw.Watts {
	return hw.Watts(math.Ceil(float64(cp.base + hw.Watts(share)*(cp.full-cp.base))))
}

// readBudgetCluster reads the nodes of a dump, a live cluster or a node
// list, and names where they came from.
func readBudgetCluster(ctx context.Context, f powerBudgetFlags) ([]budgetNode, string, error) {
	if f.nodes != "" {
		specs, err := readNodeList(f.nodes)
		if err != nil {
			return nil, "", err
		}
		out := make([]budgetNode, len(specs))
		for i, s := range specs {
			out[i] = budgetNode{spec: s}
		}
		return out, "node list " + f.nodes, nil
	}
	var r io.Reader = os.Stdin
	name := "standard input"
	switch {
	case f.kubeconfig != "":
		kc, err := k8sdump.ReadKubeconfig(f.kubeconfig, f.kcontext)
		if err != nil {
			return nil, "", err
		}
		b, err := k8sdump.Fetch(ctx, kc)
		if err != nil {
			return nil, "", err
		}
		r, name = bytes.NewReader(b), fmt.Sprintf("cluster %s (context %s)", kc.Server, kc.Context)
	case f.in != "-":
		file, err := userfile.OpenRegular(f.in)
		if err != nil {
			return nil, "", err
		}
		defer file.Close()
		r, name = file, f.in
	}
	d, err := k8sdump.ReadWith(r, name, k8sdump.Options{SystemNamespaces: f.systemNS})
	if err != nil {
		return nil, "", err
	}
	// The dump takes system pods' requests off the nodes' allocatable (a
	// replay's view); PowerBudget sees the allocatable with those pods on
	// it: put the allocatable back and count the requests as busy CPU.
	reserved := map[string]k8sdump.Reserved{}
	for _, rv := range d.Reserved {
		reserved[rv.Node] = rv
	}
	out := make([]budgetNode, len(d.Nodes))
	for i, s := range d.Nodes {
		bn := budgetNode{spec: s}
		if rv, ok := reserved[s.Name]; ok {
			bn.spec.CPUMilli, bn.spec.MemMiB = rv.AllocCPUMilli, rv.AllocMemMiB
			bn.systemCPUMilli, bn.systemPodsOnNode = rv.CPUMilli, rv.Pods
		}
		out[i] = bn
	}
	return out, name, nil
}

// cmdPowerBudget is `wattsched budget`.
func cmdPowerBudget(ctx context.Context, f powerBudgetFlags, stdout, stderr io.Writer) error {
	given := 0
	for _, s := range []string{f.in, f.kubeconfig, f.nodes} {
		if s != "" {
			given++
		}
	}
	switch {
	case given != 1:
		return usageError{errors.New("budget: give exactly one of -f FILE (a kubectl dump), --kubeconfig FILE (a live cluster) and --nodes LIST (a node list)")}
	case f.kcontext != "" && f.kubeconfig == "":
		return usageError{errors.New("budget: --context goes with --kubeconfig")}
	case len(f.systemNS) > 0 && f.nodes != "":
		return usageError{errors.New("budget: --system-namespace goes with -f or --kubeconfig (a node list has no pods)")}
	case !(f.share >= 0 && f.share <= 1):
		return usageError{fmt.Errorf("budget --share %v: want a number from 0 to 1 (the share of the range from baseline to full power)", f.share)}
	case f.force && f.values == "":
		return usageError{errors.New("budget: --force goes with --values FILE")}
	}
	for _, ns := range f.systemNS {
		if err := trace.CheckName(ns); err != nil {
			return usageError{fmt.Errorf("budget --system-namespace: %w", err)}
		}
	}
	if f.values != "" {
		if _, err := outdir.CheckFile(f.values, f.force); err != nil {
			return fmt.Errorf("budget --values: %w", err)
		}
	}
	cat := hw.Default()
	if f.catalog != "" {
		extra, err := hw.ParseFile(f.catalog)
		if err != nil {
			return err
		}
		if cat, err = cat.With(extra, f.catalog); err != nil {
			return err
		}
	}
	nodes, name, err := readBudgetCluster(ctx, f)
	if err != nil {
		return err
	}
	cp, err := modelClusterPower(cat, nodes)
	if err != nil {
		return fmt.Errorf("budget: %s: %w", name, err)
	}
	if cp.nodes == 0 {
		return fmt.Errorf("budget: %s: none of its %d nodes is in the catalog: give their hardware with --catalog", name, len(nodes))
	}
	budget := suggestBudget(cp, f.share)
	printPowerBudget(stdout, name, len(nodes), cp, f.share, budget)
	if f.values != "" {
		if err := outdir.WriteFile(f.values, budgetValues(name, cp, f.share, budget), f.force); err != nil {
			return fmt.Errorf("budget --values: %w", err)
		}
		fmt.Fprintf(stdout, "Wrote %s (helm install ... -f %s).\n", f.values, f.values)
	}
	for _, u := range cp.unknown {
		fmt.Fprintf(stderr, "warning: node %s: %s\n", u.node, u.why)
	}
	return nil
}

// kw formats watts as kilowatts with three decimals (whole watts).
func kw(w hw.Watts) string { return strconv.FormatFloat(float64(w)/1000, 'f', 3, 64) }

// printPowerBudget prints budget's tables and its suggestion with the
// reasoning.
func printPowerBudget(w io.Writer, name string, total int, cp *clusterPower, share float64, budget hw.Watts) {
	fmt.Fprintf(w, "%s: %d nodes, %d modelled with the PWR model (pwr-fgd eqs. 1-3, the power PowerBudget counts), %d not in the catalog\n\n",
		name, total, cp.nodes, len(cp.unknown))
	t := report.Table{Title: "Modelled power by GPU / CPU model (kW)",
		Head: []string{"GPU / CPU model", "nodes", "GPUs", "catalog entries (idle/TDP W)", "idle", "baseline", "full"}}
	for _, r := range cp.rows {
		entry := fmt.Sprintf("%s %g/%g", r.cpuModel, r.cpuIdleW, r.cpuTDPW)
		if r.gpuModel != "" {
			entry = fmt.Sprintf("%s %g/%g; ", r.gpuModel, r.gpuIdleW, r.gpuTDPW) + entry
		}
		t.Rows = append(t.Rows, []string{r.model, strconv.Itoa(r.nodes), strconv.Itoa(r.gpus), entry, kw(r.idle), kw(r.base), kw(r.full)})
	}
	t.Rows = append(t.Rows, []string{"total", strconv.Itoa(cp.nodes), "", "", kw(cp.idle), kw(cp.base), kw(cp.full)})
	printTable(w, t)
	if len(cp.unknown) > 0 {
		u := report.Table{Title: "Nodes not in the catalog (not counted)", Head: []string{"node", "why"}}
		for _, x := range cp.unknown {
			u.Rows = append(u.Rows, []string{x.node, x.why})
		}
		printTable(w, u)
	}
	fmt.Fprintf(w, "idle: every node empty; baseline: idle with the CPU requests of %d system pods (DaemonSet, static, system namespaces) counted busy, as PowerBudget counts them; full: every CPU socket and GPU at its TDP.\n", cp.systemPods)
	fmt.Fprintf(w, "budgetWatts: %.0f = baseline %.0f W + %g x (full %.0f W - baseline %.0f W)\n", float64(budget), float64(cp.base), share, float64(cp.full), float64(cp.base))
	fmt.Fprintln(w, "A budget at or below the baseline admits no pod that raises the count; one at full never holds a pod back. Set it to what your supply may carry if you know that figure (docs/kubernetes.md, \"Choosing budgetWatts\"); --share moves the suggestion within the range.")
}

// budgetValues is the chart values file with the suggested budget: the
// chart's default pwr-fgd profile and the same profile with PowerBudget
// (a values file replaces the whole profiles list).
func budgetValues(name string, cp *clusterPower, share float64, budget hw.Watts) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `wattsched budget` for %s:\n", strings.ReplaceAll(name, "\n", " "))
	fmt.Fprintf(&b, "# %d nodes modelled, %d not in the catalog; idle %.0f W, baseline %.0f W, full %.0f W (PWR model).\n",
		cp.nodes, len(cp.unknown), float64(cp.idle), float64(cp.base), float64(cp.full))
	fmt.Fprintf(&b, "# budgetWatts = baseline + %g x (full - baseline).\n", share)
	b.WriteString("profiles:\n")
	b.WriteString("  - schedulerName: wattsched-pwr-fgd\n    scoring: pwr-fgd\n    pwrWeight: 0.2\n")
	b.WriteString("  - schedulerName: wattsched-pwr-fgd-budget\n    scoring: pwr-fgd\n    pwrWeight: 0.2\n    powerBudget:\n")
	fmt.Fprintf(&b, "      budgetWatts: %.0f\n      mode: estimated\n", float64(budget))
	return []byte(b.String())
}
