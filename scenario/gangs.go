package scenario

// GangSpec says how the replay engine serves gang jobs (pods of one
// gang start together, all or none).
type GangSpec struct {
	// Backfill lets smaller work start around a gang that cannot start
	// yet (default true, as kube-scheduler with scheduler-plugins'
	// Coscheduling and Kueue's default BestEffortFIFO do); false is
	// strict FIFO: a waiting gang blocks every task queued behind it.
	Backfill *bool `yaml:"backfill" json:"backfill,omitempty"`
	// GroupBy packs a gang within one node group when one can hold it:
	// "" (none, default) or "gpu_model" (the nodes of one GPU model, so
	// that no pod runs on a slower model than the others).
	GroupBy string `yaml:"group_by" json:"group_by,omitempty"`
}

// GroupByGPUModel is GangSpec.GroupBy's one grouping.
const GroupByGPUModel = "gpu_model"

// HeadOfLine reports whether a waiting gang blocks the tasks behind it
// (backfill: false).
func (g *GangSpec) HeadOfLine() bool { return g != nil && g.Backfill != nil && !*g.Backfill }

func (g *GangSpec) validate(mode Mode, bad *problems) {
	if g == nil {
		return
	}
	if mode != Replay {
		bad.add("gangs: only for mode replay (gang jobs start and end; mode %s has no such jobs)", mode)
	}
	switch g.GroupBy {
	case "", GroupByGPUModel:
	default:
		bad.add("gangs.group_by: %q, want %s or empty (no groups)", g.GroupBy, GroupByGPUModel)
	}
}
