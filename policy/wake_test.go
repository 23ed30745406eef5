package policy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// PlaceAsleep is Place over the sleeping nodes: for every single scorer
// and weighted mixes, random sets of sleeping nodes and every task class,
// the node it picks among the sleeping nodes is the node Place picks on a
// cluster where exactly those nodes are on, ties by cluster.TieRank.
func TestPlaceAsleepIsPlaceOverSleepingNodes(t *testing.T) {
	var workload []job.Task
	for i, d := range indexClasses {
		for range i + 1 {
			workload = append(workload, job.Task{Demand: d})
		}
	}
	mixes := []map[string]int64{
		{"fgd": 1}, {"pwr": 1}, {"bestfit": 1}, {"dotprod": 1}, {"gpupacking": 1}, {"gpuclustering": 1},
		{"pwr": 100, "fgd": 900}, {"bestfit": 3, "pwr": 7},
	}
	for mi, mix := range mixes {
		t.Run(fmt.Sprint(mix), func(t *testing.T) {
			var ws []policy.Weighted
			for _, k := range []string{"bestfit", "dotprod", "fgd", "gpuclustering", "gpupacking", "pwr"} {
				if w, ok := mix[k]; ok {
					ws = append(ws, policy.Weighted{Name: k, Scorer: indexScorers[k](workload), Weight: w})
				}
			}
			p, err := policy.NewPlacer(nil, ws)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(mi), 11))
			for round := range 20 {
				asleepC, onlyOnC := indexCluster(), indexCluster()
				p.SetRank(cluster.TieRank(asleepC.Nodes, uint64(round)))
				var asleep []*cluster.Node
				for i, n := range asleepC.Nodes {
					sleeps := rng.IntN(3) == 0
					if sleeps {
						asleep = append(asleep, n)
					}
					if err := asleepC.SetState(n.ID, map[bool]cluster.PowerState{true: cluster.Off, false: cluster.On}[sleeps]); err != nil {
						t.Fatal(err)
					}
					if err := onlyOnC.SetState(onlyOnC.Nodes[i].ID, map[bool]cluster.PowerState{true: cluster.On, false: cluster.Off}[sleeps]); err != nil {
						t.Fatal(err)
					}
				}
				for _, d := range indexClasses {
					task := &job.Task{Demand: d, Class: -1}
					got, gotOK := p.PlaceAsleep(task, asleep)
					want, wantOK := p.Place(task, onlyOnC)
					if gotOK != wantOK || gotOK && got != want.Node {
						t.Fatalf("round %d, demand %+v: PlaceAsleep %d (%v), Place over those nodes on %d (%v)", round, d, got, gotOK, want.Node, wantOK)
					}
				}
			}
		})
	}
}
