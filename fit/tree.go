package fit

import (
	"math/rand/v2"
	"slices"
)

// TreeParams bound a CART regression tree.
type TreeParams struct {
	MaxDepth int // 0: unbounded
	MinLeaf  int // minimum samples per leaf (>= 1)
	// MaxFeatures is the number of features tried at each split (random
	// subset); 0 tries all.
	MaxFeatures int
}

// Tree is a CART regression tree (variance reduction splits, mean leaves).
type Tree struct{ nodes []treeNode }

type treeNode struct {
	feature     int // -1 for a leaf
	threshold   float64
	left, right int
	value       float64
}

// Predict implements Regressor.
func (t *Tree) Predict(x []float64) float64 {
	i := 0
	for {
		n := &t.nodes[i]
		if n.feature < 0 {
			return n.value
		}
		if x[n.feature] <= n.threshold {
			i = n.left
		} else {
			i = n.right
		}
	}
}

// FitTree grows a tree on the rows idx of d (all rows when idx is nil),
// drawing feature subsets from rng.
func FitTree(d Dataset, idx []int, p TreeParams, rng *rand.Rand) (*Tree, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	if idx == nil {
		idx = make([]int, len(d.Y))
		for i := range idx {
			idx[i] = i
		}
	}
	if p.MinLeaf < 1 {
		p.MinLeaf = 1
	}
	g := &grower{d: d, p: p, rng: rng, nf: len(d.X[0])}
	g.feats = make([]int, g.nf)
	for i := range g.feats {
		g.feats[i] = i
	}
	g.grow(append([]int(nil), idx...), 0)
	return &Tree{nodes: g.nodes}, nil
}

type grower struct {
	d     Dataset
	p     TreeParams
	rng   *rand.Rand
	nf    int
	feats []int
	nodes []treeNode
	order []int
}

func mean(d Dataset, idx []int) float64 {
	var s float64
	for _, i := range idx {
		s += d.Y[i]
	}
	return s / float64(len(idx))
}

func (g *grower) grow(idx []int, depth int) int {
	id := len(g.nodes)
	g.nodes = append(g.nodes, treeNode{feature: -1, value: mean(g.d, idx)})
	if len(idx) < 2*g.p.MinLeaf || (g.p.MaxDepth > 0 && depth >= g.p.MaxDepth) {
		return id
	}
	feats := g.feats
	if g.p.MaxFeatures > 0 && g.p.MaxFeatures < g.nf {
		g.rng.Shuffle(len(g.feats), func(i, j int) { g.feats[i], g.feats[j] = g.feats[j], g.feats[i] })
		feats = g.feats[:g.p.MaxFeatures]
	}
	var total, totalSq float64
	for _, i := range idx {
		total += g.d.Y[i]
		totalSq += g.d.Y[i] * g.d.Y[i]
	}
	n := float64(len(idx))
	bestGain, bestF, bestT := 1e-12*(totalSq-total*total/n), -1, 0.0
	if bestGain < 0 {
		bestGain = 0
	}
	g.order = append(g.order[:0], idx...)
	for _, f := range slices.Clone(feats) {
		slices.SortFunc(g.order, func(a, b int) int {
			va, vb := g.d.X[a][f], g.d.X[b][f]
			switch {
			case va < vb:
				return -1
			case va > vb:
				return 1
			}
			return a - b
		})
		var ls float64
		for k := 0; k < len(g.order)-1; k++ {
			ls += g.d.Y[g.order[k]]
			nl := float64(k + 1)
			if k+1 < g.p.MinLeaf || len(g.order)-k-1 < g.p.MinLeaf {
				continue
			}
			x0, x1 := g.d.X[g.order[k]][f], g.d.X[g.order[k+1]][f]
			if x0 == x1 {
				continue
			}
			rs := total - ls
			gain := ls*ls/nl + rs*rs/(n-nl) - total*total/n
			if gain > bestGain {
				bestGain, bestF, bestT = gain, f, (x0+x1)/2
			}
		}
	}
	if bestF < 0 {
		return id
	}
	var left, right []int
	for _, i := range idx {
		if g.d.X[i][bestF] <= bestT {
			left = append(left, i)
		} else {
			right = append(right, i)
		}
	}
	l := g.grow(left, depth+1)
	r := g.grow(right, depth+1)
	g.nodes[id] = treeNode{feature: bestF, threshold: bestT, left: l, right: r, value: g.nodes[id].value}
	return id
}

// ForestParams configure a random forest.
type ForestParams struct {
	Trees int
	Tree  TreeParams
	Seed  uint64
}

// Forest is a bagged ensemble of trees (bootstrap rows, random feature subsets).
type Forest struct{ Trees []*Tree }

// Predict implements Regressor: the mean of the trees.
func (f *Forest) Predict(x []float64) float64 {
	var s float64
	for _, t := range f.Trees {
		s += t.Predict(x)
	}
	return s / float64(len(f.Trees))
}

// FitForest grows p.Trees trees on bootstrap samples; the same seed gives
// the same forest.
func FitForest(d Dataset, p ForestParams) (*Forest, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	if p.Trees < 1 {
		p.Trees = 1
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x666f72657374))
	f := &Forest{}
	n := len(d.Y)
	for t := 0; t < p.Trees; t++ {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		tr, err := FitTree(d, idx, p.Tree, rng)
		if err != nil {
			return nil, err
		}
		f.Trees = append(f.Trees, tr)
	}
	return f, nil
}
