package shadow

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/wattsched/wattsched/cluster"
)

// The shadow's metrics (docs/kubernetes.md, "Try it first in shadow
// mode"), registered with component-base's legacy registry as the
// plugins' are. Their labels are profile, ledger, GPU model, namespace
// and reason names, never a pod or a node.
var (
	placements = metrics.NewCounterVec(&metrics.CounterOpts{Subsystem: "wattsched_shadow", Name: "placements_total",
		Help:           "Pods the cluster's scheduler bound, by profile, the actual node's GPU model, the pod's namespace and how the profile's placement compares: same_node, same_kind (another node of the same GPU model and count, CPU and memory), other_kind, no_node (none feasible on the profile's shadow state).",
		StabilityLevel: metrics.ALPHA}, []string{"profile", "gpu_model", "pod_namespace", "outcome"})
	differences = metrics.NewCounterVec(&metrics.CounterOpts{Subsystem: "wattsched_shadow", Name: "differences_total",
		Help:           "Pods a profile would have placed on another node, by the reason in the kwok replay parity's terms: tie, state, plugin, started.",
		StabilityLevel: metrics.ALPHA}, []string{"profile", "reason"})
	energyByModel = metrics.NewGaugeVec(&metrics.GaugeOpts{Subsystem: "wattsched_shadow", Name: "energy_joules",
		Help:           "Energy since the shadow started by ledger (actual, or a profile's counterfactual) and GPU model: the nodes' modelled energy (PWR model, idle included), as of the last report.",
		StabilityLevel: metrics.ALPHA}, []string{"ledger", "gpu_model"})
	energyByNamespace = metrics.NewGaugeVec(&metrics.GaugeOpts{Subsystem: "wattsched_shadow", Name: "namespace_energy_joules",
		Help:           "Dynamic energy attributed to the pods of a namespace since the shadow started, by ledger, as of the last report.",
		StabilityLevel: metrics.ALPHA}, []string{"ledger", "pod_namespace"})
	costUSD = metrics.NewGaugeVec(&metrics.GaugeOpts{Subsystem: "wattsched_shadow", Name: "cost_usd",
		Help: "Energy cost since the shadow started by ledger, as of the last report.", StabilityLevel: metrics.ALPHA}, []string{"ledger"})
	carbonKg = metrics.NewGaugeVec(&metrics.GaugeOpts{Subsystem: "wattsched_shadow", Name: "carbon_kg",
		Help: "Carbon (kg CO2eq) since the shadow started by ledger, as of the last report.", StabilityLevel: metrics.ALPHA}, []string{"ledger"})
	measuredEnergy = metrics.NewGaugeVec(&metrics.GaugeOpts{Subsystem: "wattsched_shadow", Name: "measured_energy_joules",
		Help: "Measured energy (DCGM or Kepler through Prometheus) of the nodes since the shadow started, by GPU model: what really ran.", StabilityLevel: metrics.ALPHA}, []string{"gpu_model"})
)

func init() {
	legacyregistry.MustRegister(placements, differences, energyByModel, energyByNamespace, costUSD, carbonKg, measuredEnergy)
}

// record counts profile's decision for e.
func record(profile string, e *Entry, d *Decision, specs map[string]cluster.NodeSpec) {
	model := NoGPUModel
	if sp, ok := specs[e.Actual.Node]; ok && sp.GPUModel != "" {
		model = sp.GPUModel
	}
	outcome := "other_kind"
	switch {
	case d.Node == "":
		outcome = "no_node"
	case d.Node == e.Actual.Node:
		outcome = "same_node"
	case d.SameKind:
		outcome = "same_kind"
	}
	placements.WithLabelValues(profile, model, e.Namespace, outcome).Inc()
	if d.Reason != "" {
		differences.WithLabelValues(profile, d.Reason).Inc()
	}
}

// publish sets the ledger gauges from l.
func publish(l *Ledger) {
	energyByModel.Reset()
	energyByNamespace.Reset()
	for _, b := range l.Books {
		for m, t := range b.ByGPUModel {
			energyByModel.WithLabelValues(b.Name, m).Set(t.KWh * 3.6e6)
		}
		for n, t := range b.ByNamespace {
			energyByNamespace.WithLabelValues(b.Name, n).Set(t.KWh * 3.6e6)
		}
		costUSD.WithLabelValues(b.Name).Set(b.Total.CostUSD)
		carbonKg.WithLabelValues(b.Name).Set(b.Total.CO2Kg)
	}
	measuredEnergy.Reset()
	for _, m := range l.Measured {
		measuredEnergy.WithLabelValues(m.GPUModel).Add(m.KWh * 3.6e6)
	}
}
