package cluster

import "maps"

// Clone is an independent copy of the cluster: its nodes, placements and
// totals, with no change record (ChangedSince on the copy reports that
// any node may have changed). Allocations on the copy leave c untouched:
// a tentative state for what-if placements such as a gang's.
func (c *Cluster) Clone() *Cluster {
	d := *c
	d.Nodes = make([]*Node, len(c.Nodes))
	for i, n := range c.Nodes {
		m := *n
		m.GPUFree = append([]int64(nil), n.GPUFree...)
		if n.MIG != nil {
			m.MIG = make([]*MIGGPU, len(n.MIG))
			for g, mg := range n.MIG {
				m.MIG[g] = mg.clone()
			}
		}
		d.Nodes[i] = &m
	}
	d.placements = maps.Clone(c.placements)
	d.changes, d.changeBase = nil, c.ChangeMark()+1
	return &d
}
