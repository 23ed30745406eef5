package policy

import (
	"math"
	"slices"
)

// ServeInference places each model's load (requests/s) on free nodes of a
// slotted cluster, for the heuristic baselines: types are taken in the
// order given, each node up to frac of its latency-bound capacity (Cap;
// frac > 1 loads past the bound, up to 95% of mu). It takes the nodes it
// uses out of free[t] and adds them to d. What cannot be placed within
// the limits is put on the last type used (the engine then counts the
// latency violations) and reported as false.
func ServeInference(m *SlotModels, load []float64, free []int, order []int, frac float64, d *SlotDecision) bool {
	ok := true
	for i := range m.Models {
		left := load[i]
		last := -1
		for _, t := range order {
			if left <= 1e-12 {
				break
			}
			per := math.Min(frac*m.Cap(i, t), 0.95*m.Mu[i][t])
			if per <= 0 || free[t] == 0 {
				continue
			}
			n := min(int(math.Ceil(left/per-1e-9)), free[t])
			take := math.Min(left, float64(n)*per)
			d.Infer[i][t] += n
			d.Load[i][t] += take
			free[t] -= n
			left -= take
			last = t
		}
		if left > 1e-12 {
			ok = false
			if last < 0 {
				for _, t := range order {
					if d.Infer[i][t] > 0 || free[t] > 0 {
						last = t
						break
					}
				}
				if last >= 0 && d.Infer[i][last] == 0 {
					d.Infer[i][last] = 1
					free[last]--
				}
			}
			if last < 0 {
				// No node free anywhere: take one from the model with the
				// most nodes on a type (its load stays on the rest).
				bj, bt := -1, -1
				for j := range m.Models {
					for _, t := range order {
						if j != i && d.Infer[j][t] > 1 && (bj < 0 || d.Infer[j][t] > d.Infer[bj][bt]) {
							bj, bt = j, t
						}
					}
				}
				if bj < 0 {
					// Every model has at most one node per type (a small
					// cluster): take the node of a type from a model that
					// has nodes on other types too; its load there moves
					// to those.
					for j := range m.Models {
						for _, t := range order {
							if bj < 0 && j != i && d.Infer[j][t] == 1 && nodesOf(d, j) > 1 {
								bj, bt = j, t
							}
						}
					}
					if bj < 0 {
						continue // nothing to take: fewer nodes than models with load, refused before a run
					}
					for _, t := range order {
						if t != bt && d.Infer[bj][t] > 0 {
							d.Load[bj][t] += d.Load[bj][bt]
							d.Load[bj][bt] = 0
							break
						}
					}
				}
				d.Infer[bj][bt]--
				d.Infer[i][bt]++
				last = bt
			}
			d.Load[i][last] += left
		}
	}
	return ok
}

// SpreadInference adds the free nodes to the models' nodes in d in
// proportion to their load, and spreads each model's load over all its
// nodes: in proportion to their latency-bound capacity (Cap) with byCap,
// else evenly per node (no DRS: every node serves). Every model with load
// gets at least one node when one is free.
func SpreadInference(m *SlotModels, load []float64, free []int, byCap bool, d *SlotDecision) {
	var total float64
	for _, l := range load {
		total += l
	}
	if total == 0 {
		return
	}
	for t := range free {
		n := free[t]
		given := 0
		for i := range m.Models {
			k := int(math.Floor(float64(n) * load[i] / total))
			d.Infer[i][t] += k
			given += k
		}
		// The rest round-robin to the models with the most load.
		idx := make([]int, len(load))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case load[a] > load[b]:
				return -1
			case load[a] < load[b]:
				return 1
			}
			return 0
		})
		for k := 0; given < n; k++ {
			d.Infer[idx[k%len(idx)]][t]++
			given++
		}
		free[t] = 0
	}
	for i := range m.Models {
		if load[i] == 0 {
			continue
		}
		weight := func(t int) float64 {
			if byCap && m.Cap(i, t) > 0 {
				return m.Cap(i, t)
			}
			if byCap {
				return 1e-9 * m.Mu[i][t]
			}
			return 1
		}
		var rate float64
		for t := range m.Types {
			rate += float64(d.Infer[i][t]) * weight(t)
		}
		if rate == 0 {
			// No node left for this model: borrow one from the model with most nodes.
			bi, bt := -1, -1
			for j := range m.Models {
				for t := range m.Types {
					if d.Infer[j][t] > 1 && (bi < 0 || d.Infer[j][t] > d.Infer[bi][bt]) {
						bi, bt = j, t
					}
				}
			}
			if bi < 0 {
				// Every model has at most one node per type (a small
				// cluster): take the node of a type from a model that has
				// nodes on other types too; its load moves to those.
				for j := range m.Models {
					for t := range m.Types {
						if bi < 0 && j != i && d.Infer[j][t] == 1 && nodesOf(d, j) > 1 {
							bi, bt = j, t
						}
					}
				}
				if bi < 0 {
					continue
				}
				d.Load[bi][bt] = 0 // the last loop puts it on bi's other nodes
			}
			d.Infer[bi][bt]--
			d.Infer[i][bt]++
			rate = weight(bt)
		}
		for t := range m.Types {
			d.Load[i][t] = load[i] * float64(d.Infer[i][t]) * weight(t) / rate
		}
	}
	for i := range m.Models {
		var sum float64
		for t := range m.Types {
			sum += d.Load[i][t]
		}
		if sum > 0 {
			for t := range m.Types {
				d.Load[i][t] *= load[i] / sum
			}
		}
	}
}

// nodesOf is the nodes model i serves on in d.
func nodesOf(d *SlotDecision, i int) int {
	n := 0
	for _, k := range d.Infer[i] {
		n += k
	}
	return n
}
