package tasks

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// This file is what the power planner (experiment/planpower) needs of a
// replay: the checks before a run, and one replay on nodes and domains of
// its choosing with the engine's power scaled, recording each domain's
// hourly power.

// CheckReplay makes the checks RunReplay makes before its runs (the power
// limit, the topology bound to the nodes into in.Domains, the pods that
// can never start, the job speed, the series' coverage), without running.
func CheckReplay(env *experiment.Env, s *scenario.Scenario, in *Inputs) error {
	if _, err := s.Account(); err != nil {
		return err
	}
	return checkTasks(env, s, in)
}

// PlanReplay is one replay for the planner.
type PlanReplay struct {
	Policy *scenario.PolicySpec
	Seed   uint64
	// Domains are bound to the nodes of the Inputs replayed (nil: none).
	Domains *power.Domains
	// Power, when set, wraps the power model the engine charges and
	// records (not the one the policies score with): the planner's
	// draws of the catalog's power error.
	Power func(power.Model) power.Model
}

// ReplayForPlan replays in's pods on in's nodes as replayOnce does (the
// scenario's power limit, power-down, job speed, gangs and horizon), with
// p's domains and power model, recording each domain's hourly power
// (sim.Result.DomainHours). It leaves out what the planner does not read:
// prices, recorded readings (the gate counts the estimates) and explain.
// Ties between nodes break by StableRank, not cluster.TieRank: adding
// nodes must not redraw the order of the nodes already there.
func ReplayForPlan(env *experiment.Env, s *scenario.Scenario, in *Inputs, p PlanReplay) (*sim.Result, error) {
	c, pm, placer, err := setup(env, p.Policy, in)
	if err != nil {
		return nil, err
	}
	placer.SetRank(StableRank(c.Nodes, p.Seed))
	var model power.Model = pm
	if p.Power != nil {
		model = p.Power(pm)
	}
	o := sim.Options{Mode: sim.Replay, Power: model, PowerLimit: limit(s, c), Seed: p.Seed, PowerDown: powerDown(s), Speed: in.Speed,
		Domains: p.Domains, DomainsAbove: s.Topology.Above(), DomainHours: true}
	acct, err := s.Account()
	if err != nil {
		return nil, err
	}
	if h, ser := seriesHorizon(acct); ser != nil {
		o.Horizon, o.HorizonWhat = h, "the end of "+ser.Name
	}
	e, err := sim.New(c, &policy.Online{Placer: placer, Gangs: gangOptions(s, p.Domains)}, o)
	if err != nil {
		return nil, err
	}
	return e.Run(in.Pods)
}

// ModelErrorFor is the power model's error figure (the study's p95
// relative error and bias of busy-GPU power) that a replay under power
// model pm (scenario power_model) applies to GPU model gpuModel.
func ModelErrorFor(cat *hw.Catalog, pm, gpuModel string) ModelError {
	return modelErrorFor(cat, pm, gpuModel)
}

// StableRank is a tie order of the nodes drawn from seed that adding or
// removing nodes leaves alone for the others: each node ranks by a seeded
// hash of its name (FNV-1a over the seed and the name; equal hashes by
// name). cluster.TieRank draws a permutation of the whole name-sorted
// list, so one more node redraws every rank, which between two steps of
// the planner would be a new tie order, not the added nodes.
func StableRank(nodes []*cluster.Node, seed uint64) []int {
	key := make([]uint64, len(nodes))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	for i, n := range nodes {
		h := fnv.New64a()
		h.Write(b[:])
		h.Write([]byte(n.Name))
		key[i] = h.Sum64()
	}
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(key[a], key[b]), cmp.Compare(nodes[a].Name, nodes[b].Name))
	})
	rank := make([]int, len(nodes))
	for r, i := range order {
		rank[i] = r
	}
	return rank
}
