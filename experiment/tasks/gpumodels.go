package tasks

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/sim"
)

// GPUModelsFile is the per-GPU-model accounting that run and compare
// write beside their other results.
const GPUModelsFile = "gpu_models.csv"

// NoGPUModel names the nodes without a GPU in the per-model accounting.
const NoGPUModel = "cpu"

// ModelUsage is what the nodes of one GPU model carried in a run (or, in
// a comparison, the mean over the seeds).
type ModelUsage struct {
	// Model is the GPU model as the node list spells it (NoGPUModel for
	// the nodes without a GPU).
	Model string `json:"gpu_model"`
	Nodes int    `json:"nodes"`
	GPUs  int    `json:"gpus"`
	// Started counts the pods that started on these nodes.
	Started experiment.Num `json:"pods_started"`
	// GPUHours is each started pod's GPUs (whole or shared fraction) times
	// the hours it held them (to its end, or to the end of the run).
	GPUHours experiment.Num `json:"gpu_hours"`
	// EnergyKWh is the nodes' CPU and GPU energy; BusyKWh the part
	// attributed to the pods on them (the power above idle), IdleKWh the
	// rest (idle, and off or waking with power_down).
	EnergyKWh experiment.Num `json:"energy_kwh"`
	BusyKWh   experiment.Num `json:"busy_kwh"`
	IdleKWh   experiment.Num `json:"idle_kwh"`
	// MeanJCTS and P90JCTS are over the pods that ended on these nodes
	// (submission to end; NaN, null in JSON, when none did).
	MeanJCTS experiment.Num `json:"mean_jct_s"`
	P90JCTS  experiment.Num `json:"p90_jct_s"`
	// GPUBusyKWh is the energy of the nodes' busy GPUs (any allocation;
	// sim.Result.GPUBusyEnergy): the part the power model's busy term
	// prices. ModelBandKWh is it times the model's measured p95 relative
	// error, ModelP95Rel, from the figure ModelErrorFrom names
	// (docs/power-models.md, "Error bands in results").
	GPUBusyKWh     experiment.Num `json:"gpu_busy_kwh"`
	ModelP95Rel    experiment.Num `json:"model_p95_rel"`
	ModelBandKWh   experiment.Num `json:"model_band_kwh"`
	ModelErrorFrom string         `json:"model_error_from,omitempty"`
}

// errorOf gives the power model's error figure for a GPU model as the node
// list spells it (nil: no figures, every band 0).
type errorOf func(gpuModel string) ModelError

// runErrors is errorOf for a run priced by power model pm over catalog
// cat (nil: the embedded one).
func runErrors(cat *hw.Catalog, pm string) errorOf {
	if cat == nil {
		cat = hw.Default()
	}
	return func(m string) ModelError { return modelErrorFor(cat, pm, m) }
}

// modelOf is the accounting name of a node's GPU model.
func modelOf(n cluster.NodeSpec) string {
	if n.GPUModel == "" || n.GPUs == 0 {
		return NoGPUModel
	}
	return n.GPUModel
}

// modelNames are the GPU models of nodes, sorted by name (so that the
// rows do not depend on the node list's order), NoGPUModel last.
func modelNames(nodes []cluster.NodeSpec) []string {
	var names []string
	for _, n := range nodes {
		if m := modelOf(n); !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == NoGPUModel) != (b == NoGPUModel) {
			if a == NoGPUModel {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, b)
	})
	return names
}

// modelUsage accounts one run per GPU model: nodes are the run's node
// list (res's node IDs index it), pods its task list (res.Tasks[i] is
// pods[i]).
func modelUsage(nodes []cluster.NodeSpec, pods []job.Task, res *sim.Result, errs errorOf) []ModelUsage {
	names := modelNames(nodes)
	out := make([]ModelUsage, len(names))
	idx := map[string]int{}
	for i, m := range names {
		out[i].Model = m
		idx[m] = i
	}
	busy := make([]float64, len(names)) // J
	jcts := make([][]float64, len(names))
	for i, t := range res.Tasks {
		if t.Start < 0 || t.Node < 0 {
			continue
		}
		k := idx[modelOf(nodes[t.Node])]
		u := &out[k]
		u.Started++
		end := t.End
		if end < 0 {
			end = res.End
		}
		u.GPUHours += experiment.Num(float64(pods[i].TotalGPUMilli()) / job.MilliPerGPU * float64(end-t.Start) / 3.6e6)
		busy[k] += float64(t.Energy)
		if t.End >= 0 {
			jcts[k] = append(jcts[k], (t.End - t.Submit).Seconds())
		}
	}
	total := make([]float64, len(names))   // J
	gpuBusy := make([]float64, len(names)) // J
	for i, n := range nodes {
		k := idx[modelOf(n)]
		out[k].Nodes++
		out[k].GPUs += n.GPUs
		if i < len(res.NodeEnergy) {
			total[k] += float64(res.NodeEnergy[i])
		}
		if i < len(res.GPUBusyEnergy) {
			gpuBusy[k] += float64(res.GPUBusyEnergy[i])
		}
	}
	for k := range out {
		out[k].EnergyKWh = experiment.Num(total[k] / 3.6e6)
		out[k].BusyKWh = experiment.Num(busy[k] / 3.6e6)
		out[k].IdleKWh = experiment.Num((total[k] - busy[k]) / 3.6e6)
		out[k].MeanJCTS, out[k].P90JCTS = experiment.Num(mean(jcts[k])), experiment.Num(quantile(jcts[k], 0.9))
		out[k].GPUBusyKWh = experiment.Num(gpuBusy[k] / 3.6e6)
		if errs != nil && out[k].Model != NoGPUModel {
			e := errs(out[k].Model)
			out[k].ModelP95Rel, out[k].ModelErrorFrom = experiment.Num(e.P95Rel), e.Source
			out[k].ModelBandKWh = out[k].GPUBusyKWh * experiment.Num(e.P95Rel)
		}
	}
	return out
}

// usageBand is the error band of a run's (or a mean's) energy from its
// per-model accounting: sum over GPU models of busy-GPU kWh x p95 relative
// error (kWh, a half-width; modelBand).
func usageBand(us []ModelUsage) experiment.Num {
	busy, errs := usageErrors(us)
	return experiment.Num(modelBand(busy, errs))
}

// usageErrors are the busy-GPU kWh and error figure of each model of us.
func usageErrors(us []ModelUsage) ([]float64, []ModelError) {
	busy := make([]float64, len(us))
	errs := make([]ModelError, len(us))
	for k, u := range us {
		busy[k], errs[k] = float64(u.GPUBusyKWh), ModelError{P95Rel: float64(u.ModelP95Rel), Source: u.ModelErrorFrom}
	}
	return busy, errs
}

// meanUsage is the mean of runs' accountings (each from modelUsage over
// the same node list, so with the same models in the same order): counts,
// GPU-hours and energies averaged over the runs, JCTs over the runs where
// some pod ended on the model.
func meanUsage(runs [][]ModelUsage) []ModelUsage {
	if len(runs) == 0 {
		return nil
	}
	out := slices.Clone(runs[0])
	for k := range out {
		var started, gh, e, b, id, gb []float64
		var mj, pj []float64
		for _, r := range runs {
			u := r[k]
			started, gh = append(started, float64(u.Started)), append(gh, float64(u.GPUHours))
			e, b, id = append(e, float64(u.EnergyKWh)), append(b, float64(u.BusyKWh)), append(id, float64(u.IdleKWh))
			gb = append(gb, float64(u.GPUBusyKWh))
			if !math.IsNaN(float64(u.MeanJCTS)) {
				mj, pj = append(mj, float64(u.MeanJCTS)), append(pj, float64(u.P90JCTS))
			}
		}
		m := func(xs []float64) experiment.Num { return experiment.Num(mean(xs)) }
		out[k].Started, out[k].GPUHours, out[k].EnergyKWh, out[k].BusyKWh, out[k].IdleKWh = m(started), m(gh), m(e), m(b), m(id)
		out[k].MeanJCTS, out[k].P90JCTS = m(mj), m(pj)
		// The band is linear in the busy energy: the band of the mean.
		out[k].GPUBusyKWh = m(gb)
		out[k].ModelBandKWh = out[k].GPUBusyKWh * out[k].ModelP95Rel
	}
	return out
}

// modelHead are the per-model columns after the leading ones.
var modelHead = []string{"gpu_model", "nodes", "gpus", "pods_started", "gpu_hours", "energy_kwh", "busy_kwh", "idle_kwh", "mean_jct_s", "p90_jct_s", "gpu_busy_kwh", "model_band_kwh"}

// modelCSVRow is one model's columns of gpu_models.csv.
func modelCSVRow(u ModelUsage) []string {
	return []string{u.Model, strconv.Itoa(u.Nodes), strconv.Itoa(u.GPUs), report.F(float64(u.Started)), report.F(float64(u.GPUHours)),
		report.F(float64(u.EnergyKWh)), report.F(float64(u.BusyKWh)), report.F(float64(u.IdleKWh)), report.F(float64(u.MeanJCTS)), report.F(float64(u.P90JCTS)),
		report.F(float64(u.GPUBusyKWh)), report.F(float64(u.ModelBandKWh))}
}

// modelTable starts the per-model table: lead names the leading columns
// (policy, and variant in a comparison of several settings).
func modelTable(title string, lead []string) report.Table {
	return report.Table{Title: title, Head: append(slices.Clone(lead), "GPU model", "nodes", "GPUs", "pods started", "GPU-h", "energy kWh", "busy kWh", "idle kWh", "mean JCT s", "p90 JCT s", "busy-GPU kWh", "power model ± kWh")}
}

// modelTableRow is one model's cells of the per-model table; startedFmt
// formats the pods started (%.0f for one run, %.1f for a mean over seeds).
func modelTableRow(lead []string, u ModelUsage, startedFmt string) []string {
	return append(slices.Clone(lead), u.Model, strconv.Itoa(u.Nodes), strconv.Itoa(u.GPUs), fmt.Sprintf(startedFmt, float64(u.Started)),
		fmt.Sprintf("%.1f", float64(u.GPUHours)), fmt.Sprintf("%.1f", float64(u.EnergyKWh)), fmt.Sprintf("%.1f", float64(u.BusyKWh)),
		fmt.Sprintf("%.1f", float64(u.IdleKWh)), orDash("%.0f", u.MeanJCTS), orDash("%.0f", u.P90JCTS),
		fmt.Sprintf("%.1f", float64(u.GPUBusyKWh)), bandCell(u))
}

// bandCell is a model's band in the per-model table: the kWh and the p95
// relative error it comes from, "(pooled)" when the GPU model has no
// measurement of its own; "-" for the nodes without a GPU.
func bandCell(u ModelUsage) string {
	if u.Model == NoGPUModel {
		return "-"
	}
	c := fmt.Sprintf("%.1f (p95 %.0f%%", float64(u.ModelBandKWh), 100*float64(u.ModelP95Rel))
	if strings.HasPrefix(u.ModelErrorFrom, "pooled") {
		c += ", pooled"
	}
	return c + ")"
}
