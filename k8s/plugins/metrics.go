package plugins

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/wattsched/wattsched/power"
)

// Metrics every profile exports, with or without the PowerBudget plugin
// (docs/kubernetes.md, "Metrics"): the modelled power of each node the
// profile sees, and each score plugin's placements and chosen-node
// scores. Their labels are node, GPU model, profile and plugin names
// only, never a pod: the series are bounded by nodes x profiles (power)
// and by score plugins x profiles x GPU models (placements).
var (
	modelledNodePowerDesc = metrics.NewDesc("wattsched_modelled_node_power_watts",
		"Each node's modelled power (PWR model, placed and assumed pods) as the profile saw it at its last scheduling cycle.",
		[]string{"node", "gpu_model", "profile"}, nil, metrics.ALPHA, "")
	podsPlaced = metrics.NewCounterVec(&metrics.CounterOpts{Subsystem: "wattsched", Name: "pods_placed_total",
		Help:           "Pods bound by a profile, counted once for each of its wattsched score plugins, by the chosen node's GPU model (none without GPUs).",
		StabilityLevel: metrics.ALPHA}, []string{"plugin", "profile", "gpu_model"})
	chosenScore = metrics.NewHistogramVec(&metrics.HistogramOpts{Subsystem: "wattsched", Name: "chosen_node_score",
		Help:           "The chosen node's score from each score plugin after its normalisation (0..100, before the profile's weight), for bound pods that were scored (a pod with one feasible node is not).",
		Buckets:        []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100},
		StabilityLevel: metrics.ALPHA}, []string{"plugin", "profile"})
)

func init() {
	legacyregistry.MustRegister(podsPlaced, chosenScore)
	legacyregistry.CustomMustRegister(&profileCollector{})
}

// noGPUModel is the gpu_model label of a node without GPUs.
const noGPUModel = "none"

// seenNodes are the nodes a profile saw at its last PreFilter, for
// profileCollector; seq orders the publications of all profiles (a
// scheduler rebuilt in one process replaces an older one of the same
// profile name).
type seenNodes struct {
	mu      sync.Mutex
	profile string
	seq     uint64
	entries []*nodeEntry
	// models are the GPU models seen (the profile's pods_placed_total
	// series of each start at zero: see zeroSeries).
	models map[string]bool
}

var seenSeq atomic.Uint64

// profileName is the profile's scheduler name, when the handle is the
// profile's framework (it is in kube-scheduler).
func profileName(h fwk.Handle) string {
	if f, ok := h.(interface{ ProfileName() string }); ok {
		return f.ProfileName()
	}
	return ""
}

// observe records the entries of the cycle's nodes (rebuilding those
// whose NodeInfo changed, as Filter would).
func (s *shared) observe(nodes []fwk.NodeInfo) {
	s.seen.mu.Lock()
	defer s.seen.mu.Unlock()
	es := s.seen.entries[:0]
	for _, ni := range nodes {
		if e, err := s.entry(ni); err == nil && e.err == nil {
			es = append(es, e)
			if m := e.n.GPUModel; !s.seen.models[m] {
				s.zeroPlaced(m)
			}
		}
	}
	clear(es[len(es):cap(es)]) // drop the entries of nodes gone since
	s.seen.entries = es
	s.seen.seq = seenSeq.Add(1)
}

// zeroPlaced creates the profile's pods_placed_total series of a GPU
// model at zero (s.seen.mu held): a counter that Prometheus first sees
// at 1 has increased by nothing over any window, so every series of the
// dashboard's increase() must exist before its first pod.
func (s *shared) zeroPlaced(model string) {
	if s.seen.models == nil {
		s.seen.models = map[string]bool{}
	}
	s.seen.models[model] = true
	if model == "" {
		model = noGPUModel
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.scorers {
		podsPlaced.WithLabelValues(p.name, s.seen.profile, model)
	}
}

// profileCollector exports wattsched_modelled_node_power_watts from every
// profile's last PreFilter, computing the power at the scrape.
type profileCollector struct{ metrics.BaseStableCollector }

// DescribeWithStability implements metrics.StableCollector.
func (*profileCollector) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- modelledNodePowerDesc }

// CollectWithStability implements metrics.StableCollector.
func (*profileCollector) CollectWithStability(ch chan<- metrics.Metric) {
	sharedMu.Lock()
	all := make([]*shared, 0, len(sharedFor))
	for _, s := range sharedFor {
		all = append(all, s)
	}
	sharedMu.Unlock()
	type sample struct {
		seq   uint64
		model string
		w     float64
	}
	type key struct{ profile, node string }
	latest := map[key]sample{}
	for _, s := range all {
		s.seen.mu.Lock()
		for _, e := range s.seen.entries {
			k := key{s.seen.profile, e.n.Name}
			if old, ok := latest[k]; ok && old.seq > s.seen.seq {
				continue
			}
			m := e.n.GPUModel
			if m == "" {
				m = noGPUModel
			}
			latest[k] = sample{seq: s.seen.seq, model: m, w: float64(power.PWR{}.NodePower(e.n).Total())}
		}
		s.seen.mu.Unlock()
	}
	for k, v := range latest {
		ch <- metrics.NewLazyConstMetric(modelledNodePowerDesc, metrics.GaugeValue, v.w, k.node, v.model, k.profile)
	}
}

// placement is what a bound pod's cycle counts: the chosen node's GPU
// model and each score plugin's score of it.
type placement struct {
	gpuModel string
	scores   []pluginScore
}

// pluginScore is one score plugin's normalised score of the chosen node;
// scored is false when the framework did not score (one feasible node).
type pluginScore struct {
	plugin string
	score  int64
	scored bool
}

// keepScores keeps this cycle's normalised scores, for chosen.
func (p *Score) keepScores(scores fwk.NodeScoreList) {
	p.last = append(p.last[:0], scores...)
	p.lastCycle = p.cycle
}

// chosen is the plugin's normalised score of nodeName in this cycle.
func (p *Score) chosen(state fwk.CycleState, nodeName string) pluginScore {
	ps := pluginScore{plugin: p.name}
	d, err := state.Read(p.key)
	if err != nil || d.(*scoreCycle).cycle != p.cycle || p.lastCycle != p.cycle {
		return ps
	}
	for _, s := range p.last {
		if s.Name == nodeName {
			ps.score, ps.scored = s.Score, true
			break
		}
	}
	return ps
}

// recordPlacement runs at Reserve, while the score plugins' buffers hold
// this cycle: it keeps the chosen node's GPU model and scores in the
// cycle's data for PostBind.
func (g *GPU) recordPlacement(state fwk.CycleState, cd *cycleData, nodeName string) {
	pl := &placement{gpuModel: noGPUModel}
	if ni, err := g.h.SnapshotSharedLister().NodeInfos().Get(nodeName); err == nil {
		if n, err := g.s.node(ni); err == nil && n.GPUModel != "" {
			pl.gpuModel = n.GPUModel
		}
	}
	g.s.mu.RLock()
	scorers := g.s.scorers
	g.s.mu.RUnlock()
	for _, p := range scorers {
		if g.scores(p.name) {
			pl.scores = append(pl.scores, p.chosen(state, nodeName))
		}
	}
	cd.placed = pl
}

// scores reports whether the profile runs the named score plugin.
func (g *GPU) scores(name string) bool {
	g.scoreOnce.Do(func() {
		g.scoreSet = map[string]bool{}
		if f, ok := g.h.(interface{ ListPlugins() *schedulerapi.Plugins }); ok {
			if ps := f.ListPlugins(); ps != nil {
				for _, p := range ps.Score.Enabled {
					g.scoreSet[p.Name] = true
				}
			}
		}
	})
	return g.scoreSet[name]
}

var _ fwk.PostBindPlugin = (*GPU)(nil)

// PostBind counts the bound pod for each of the profile's score plugins.
func (g *GPU) PostBind(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ string) {
	cd := demand(state, pod)
	if cd.placed == nil {
		return
	}
	profile := profileName(g.h)
	for _, s := range cd.placed.scores {
		podsPlaced.WithLabelValues(s.plugin, profile, cd.placed.gpuModel).Inc()
		if s.scored {
			chosenScore.WithLabelValues(s.plugin, profile).Observe(float64(s.score))
		}
	}
}
