// Package clustertest builds small clusters for tests.
package clustertest

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
)

// Builder accumulates node specs.
type Builder struct{ specs []cluster.NodeSpec }

// NodeBuilder configures one node.
type NodeBuilder struct {
	b *Builder
	i int
}

// New starts an empty cluster.
func New() *Builder { return &Builder{} }

// Node adds a node with 32 vCPU and 256 GiB and no GPUs.
func (b *Builder) Node(name string) *NodeBuilder {
	b.specs = append(b.specs, cluster.NodeSpec{Name: name, CPUMilli: 32000, MemMiB: 262144})
	return &NodeBuilder{b: b, i: len(b.specs) - 1}
}

// GPUs gives the node k GPUs of model m.
func (nb *NodeBuilder) GPUs(k int, m string) *NodeBuilder {
	nb.b.specs[nb.i].GPUs, nb.b.specs[nb.i].GPUModel = k, m
	return nb
}

// CPU sets the node's vCPU capacity in milli.
func (nb *NodeBuilder) CPU(milli int64) *NodeBuilder {
	nb.b.specs[nb.i].CPUMilli = milli
	return nb
}

// Mem sets the node's memory in MiB.
func (nb *NodeBuilder) Mem(mib int64) *NodeBuilder {
	nb.b.specs[nb.i].MemMiB = mib
	return nb
}

// MIG puts the node's GPUs in MIG mode: each GPU with the given static
// layout, or dynamic MIG when layout is nil.
func (nb *NodeBuilder) MIG(layout ...cluster.MIGSlot) *NodeBuilder {
	sp := &nb.b.specs[nb.i]
	if layout == nil {
		sp.MIG = &cluster.MIGSpec{Dynamic: true}
		return nb
	}
	sp.MIG = &cluster.MIGSpec{}
	for range sp.GPUs {
		sp.MIG.Layouts = append(sp.MIG.Layouts, layout)
	}
	return nb
}

// Node adds another node (chaining helper).
func (nb *NodeBuilder) Node(name string) *NodeBuilder { return nb.b.Node(name) }

// Build makes the cluster with the default catalog; it panics on bad specs.
func (nb *NodeBuilder) Build() *cluster.Cluster { return nb.b.Build() }

// Build makes the cluster with the default catalog; it panics on bad specs.
func (b *Builder) Build() *cluster.Cluster {
	c, err := cluster.New(hw.Default(), b.specs)
	if err != nil {
		panic(err)
	}
	return c
}
