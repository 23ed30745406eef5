package scenario

import "strings"

// GangSpec says how the replay engine serves gang jobs (pods of one
// gang start together, all or none).
type GangSpec struct {
	// Backfill lets smaller work start around a gang that cannot start
	// yet (default true, as kube-scheduler with scheduler-plugins'
	// Coscheduling and Kueue's default BestEffortFIFO do); false is
	// strict FIFO: a waiting gang blocks every task queued behind it.
	Backfill *bool `yaml:"backfill" json:"backfill,omitempty"`
	// GroupBy packs a gang within one node group when one can hold it:
	// "" (none, default), "gpu_model" (the nodes of one GPU model, so
	// that no pod runs on a slower model than the others), "domain" (the
	// nodes of one innermost power domain of the topology, a rack) or
	// "domain:LEVEL" (of one domain of that level, e.g. domain:row).
	GroupBy string `yaml:"group_by" json:"group_by,omitempty"`
}

// GangSpec.GroupBy's groupings: GroupByGPUModel, GroupByDomain, and
// GroupByDomain + ":" + a level.
const (
	GroupByGPUModel = "gpu_model"
	GroupByDomain   = "domain"
)

// DomainLevel is the level a "domain:LEVEL" grouping names ("" for
// "domain", the innermost), and whether the grouping is by domain.
func (g *GangSpec) DomainLevel() (level string, ok bool) {
	if g == nil {
		return "", false
	}
	if g.GroupBy == GroupByDomain {
		return "", true
	}
	level, ok = strings.CutPrefix(g.GroupBy, GroupByDomain+":")
	return level, ok && level != ""
}

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
	if _, dom := g.DomainLevel(); g.GroupBy != "" && g.GroupBy != GroupByGPUModel && !dom {
		bad.add("gangs.group_by: %q, want %s, %s, %s:LEVEL or empty (no groups)", g.GroupBy, GroupByGPUModel, GroupByDomain, GroupByDomain)
	}
}
