package solver_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/solver"
)

// cedlaShape builds a plan of the CE-DLA problem's shape, aggregated by node
// type: jobs training jobs, each in a window of 15-minute slots, on one node of
// one of 4 types (40 nodes each) per slot (binary x); per type and slot the
// number of nodes on and serving inference (integers); inference capacity
// covering the load (eq. 29 as a capacity row); turn-ons charged (the max()
// term linearised by a continuous variable). Prices: the embedded NYISO
// (US-NY-NYIS) 2023 hourly series from 1 June 2023 00:00 UTC, each hour for 4
// slots. Powers, epoch times, service rates and loads are synthetic values of
// plausible size, not the paper's tables: this is a solver benchmark, not a
// reproduction.
func cedlaShape(b testing.TB, jobs, slots int) (*solver.Model, error) {
	prices, err := grid.Embedded("US-NY-NYIS", "price", "")
	if err != nil {
		return nil, err
	}
	first := int(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC).Sub(prices.Start) / time.Hour)
	price := make([]float64, slots) // USD/MWh
	for h := range slots {
		price[h] = prices.Values[first+h/4]
	}
	const types, perType = 4, 40
	trainW := []float64{120, 125, 160, 180}                         // W while training
	inferW := []float64{90, 95, 130, 150}                           // W while serving
	idleW := []float64{10, 10, 15, 20}                              // W when on and idle
	serve := []float64{500, 550, 800, 900}                          // requests/min per node
	speed := []float64{1, 1.1, 1.6, 1.8}                            // epochs per slot relative to type 0
	const turnOnUSD = 0.002                                         // per node turned on
	usd := func(w, p float64) float64 { return w * 0.25 / 1e6 * p } // W for a slot at p USD/MWh

	r := rand.New(rand.NewPCG(12, uint64(jobs)))
	m := solver.NewModel("cedla-shape")
	x := make([][][]solver.Var, types) // [k][h] -> jobs' vars
	nodeTerms := make([][][]solver.Term, types)
	for k := range types {
		x[k] = make([][]solver.Var, slots)
		nodeTerms[k] = make([][]solver.Term, slots)
	}
	for j := range jobs {
		arrive := r.IntN(slots / 2)
		window := 8 + r.IntN(40)
		deadline := min(slots-1, arrive+window)
		base := 0.5 + r.Float64() // epochs per slot on type 0
		need := math.Round(base * float64(deadline-arrive+1) * (0.3 + 0.4*r.Float64()))
		var progress []solver.Term
		for h := arrive; h <= deadline; h++ {
			var one []solver.Term
			for k := range types {
				v := m.AddVar(fmt.Sprintf("x[%d,%d,%d]", j, k, h), 0, 1, usd(trainW[k]-idleW[k], price[h]), solver.Binary)
				progress = append(progress, solver.Term{Var: v, Coef: base * speed[k]})
				one = append(one, solver.Term{Var: v, Coef: 1})
				nodeTerms[k][h] = append(nodeTerms[k][h], solver.Term{Var: v, Coef: 1})
			}
			m.AddRow(fmt.Sprintf("one[%d,%d]", j, h), math.Inf(-1), 1, one...)
		}
		m.AddRow(fmt.Sprintf("epochs[%d]", j), need, math.Inf(1), progress...)
	}
	var prevOn [types]solver.Var
	for h := range slots {
		// Inference load with a daily shape, about 30% of the nodes.
		load := 25000 * (1 + 0.5*math.Sin(2*math.Pi*float64(h)/96))
		var cover []solver.Term
		for k := range types {
			on := m.AddVar(fmt.Sprintf("on[%d,%d]", k, h), 0, perType, usd(idleW[k], price[h]), solver.Integer)
			inf := m.AddVar(fmt.Sprintf("inf[%d,%d]", k, h), 0, perType, usd(inferW[k]-idleW[k], price[h]), solver.Integer)
			cover = append(cover, solver.Term{Var: inf, Coef: serve[k]})
			terms := append(nodeTerms[k][h], solver.Term{Var: inf, Coef: 1}, solver.Term{Var: on, Coef: -1})
			m.AddRow(fmt.Sprintf("nodes[%d,%d]", k, h), math.Inf(-1), 0, terms...)
			up := m.AddVar(fmt.Sprintf("up[%d,%d]", k, h), 0, math.Inf(1), turnOnUSD, solver.Continuous)
			if h == 0 {
				m.AddRow(fmt.Sprintf("up[%d,%d]", k, h), 0, math.Inf(1), solver.Term{Var: up, Coef: 1}, solver.Term{Var: on, Coef: -1})
			} else {
				m.AddRow(fmt.Sprintf("up[%d,%d]", k, h), 0, math.Inf(1), solver.Term{Var: up, Coef: 1}, solver.Term{Var: on, Coef: -1}, solver.Term{Var: prevOn[k], Coef: 1})
			}
			prevOn[k] = on
		}
		m.AddRow(fmt.Sprintf("serve[%d]", h), load, math.Inf(1), cover...)
	}
	return m, nil
}

// BenchmarkHiGHS solves the CE-DLA-shaped plan (280 jobs, 4 node types of
// 40, 96 slots) on one thread to a 1% relative gap with a 60 s limit,
// reporting the gap reached (%), the solve time (s), branch-and-bound
// nodes and the model's size.
func BenchmarkHiGHS(b *testing.B) {
	for _, jobs := range []int{175, 280} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			m, err := cedlaShape(b, jobs, 96)
			if err != nil {
				b.Fatal(err)
			}
			o := solver.Options{TimeLimit: time.Minute, RelGap: 0.01, Threads: 1}
			var res solver.Result
			for b.Loop() {
				res, err = solver.HiGHS().Solve(context.Background(), m, o)
				if err != nil {
					b.Fatal(err)
				}
				if !res.HasSolution {
					b.Fatalf("status %v without a solution", res.Status)
				}
				if err := m.Check(res.X, 1e-6); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(100*res.Gap, "gap%")
			b.ReportMetric(res.Time.Seconds(), "solve-s")
			b.ReportMetric(float64(res.Nodes), "nodes")
			b.ReportMetric(float64(m.NumVars()), "vars")
			b.ReportMetric(float64(m.NumRows()), "rows")
			if res.Status != solver.Optimal {
				b.Logf("status %v", res.Status)
			}
		})
	}
}
