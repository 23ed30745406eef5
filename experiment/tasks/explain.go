package tasks

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/scenario"
)

// ExplainFile is the file --explain writes beside the other results.
const ExplainFile = "explain.csv"

// ExplainBudget bounds the placement decisions --explain keeps over all the
// runs of one command, so that its memory stays bounded: 0.2 KB a decision
// on the byo-replay example (4 policies, 2 GPU models), 0.9 KB on the
// embedded pwr-default inflation (8 policies, 6 GPU models), so at most
// about 27 MB (and twice that while it is written): each run keeps its first
// ExplainPerRun(runs) decisions and the results say when a run had more.
const ExplainBudget = 30_000

// ExplainPerRun is the decisions each of runs runs keeps under ExplainBudget.
func ExplainPerRun(runs int) int {
	return max(1, ExplainBudget/max(1, runs))
}

// ExplainModes are the modes --explain supports: those whose placements
// are made by a Placer's filters and weighted scorers.
var ExplainModes = []scenario.Mode{scenario.Inflation, scenario.Replay}

// scorerKeys names ps's scorers in explain.csv's columns: the scorer's
// policy name, with "#2" on the second of two scorers of one policy.
func scorerKeys(ps *scenario.PolicySpec) []string {
	seen := map[string]int{}
	var keys []string
	for _, sc := range ps.Scorers {
		seen[sc.Policy]++
		k := sc.Policy
		if n := seen[sc.Policy]; n > 1 {
			k += "#" + strconv.Itoa(n)
		}
		keys = append(keys, k)
	}
	return keys
}

// explainColumns are the scorer columns of explain.csv: the keys of every
// policy of s, in the order they first appear.
func explainColumns(s *scenario.Scenario) []string {
	var keys []string
	for i := range s.Policies {
		for _, k := range scorerKeys(&s.Policies[i]) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// ExplainHeader is explain.csv's header for scenario s (docs/formats.md),
// with a variant column after the policy when variant is set (compare,
// whose systems are policies under settings).
func ExplainHeader(s *scenario.Scenario, variant bool) []string {
	head := []string{"policy", "seed", "time_s", "task", "name", "rank", "node", "gpu_model", "total"}
	if variant {
		head = slices.Insert(head, 1, "variant")
	}
	for _, k := range explainColumns(s) {
		head = append(head, k+"_raw", k+"_score", k+"_weighted")
	}
	head = append(head, "feasible_nodes", "filtered_out")
	if s.HasMIG() {
		head = append(head, "mig_instance")
	}
	return head
}

// explainLog is one run's rows of explain.csv, written as the run places
// tasks.
type explainLog struct {
	policy, seed string
	// variant is the setting, written after the policy when set (compare).
	variant string
	cols    []int // the scorers' column groups (-1: none)
	ncols   int   // scorer column groups in the file
	c       *cluster.Cluster
	buf     bytes.Buffer
	w       *csv.Writer
	row     []string
	// kept and seen count the decisions written and made.
	kept, seen, max int
	// mig adds the mig_instance column: the GPU and MIG instance a MIG
	// task was given (gpu<i>:<profile>@<start>), on the chosen node's row.
	mig bool
}

// newExplainLog starts the log of one run of policy ps (one of s's), or
// returns nil when env does not explain.
func newExplainLog(env *experiment.Env, s *scenario.Scenario, ps *scenario.PolicySpec, seed uint64, c *cluster.Cluster) *explainLog {
	if env.ExplainDecisions <= 0 {
		return nil
	}
	keys := explainColumns(s)
	var cols []int
	for _, k := range scorerKeys(ps) {
		cols = append(cols, slices.Index(keys, k)) // -1: a scorer s lacks, left out
	}
	l := &explainLog{policy: ps.Name, seed: strconv.FormatUint(seed, 10), cols: cols, ncols: len(keys), c: c, max: env.ExplainDecisions, mig: s.HasMIG()}
	l.w = csv.NewWriter(&l.buf)
	return l
}

// record writes one decision's rows: the chosen node (rank 1), its
// runners-up (rank 2...) and the best node of each other GPU model.
func (l *explainLog) record(now job.Time, t *job.Task, x *policy.Explanation) {
	l.seen++
	if l.kept >= l.max {
		return
	}
	l.kept++
	for r, ns := range x.Nodes {
		n := l.c.Nodes[ns.Node]
		row := append(l.row[:0], l.policy)
		if l.variant != "" {
			row = append(row, l.variant)
		}
		row = append(row, l.seed, strconv.FormatFloat(float64(now)/1000, 'f', 3, 64), strconv.Itoa(int(t.ID)), t.Name,
			strconv.Itoa(ns.Rank), n.Name, n.GPUModel, strconv.FormatInt(ns.Total, 10))
		start := len(row)
		for range 3 * l.ncols {
			row = append(row, "")
		}
		for i, col := range l.cols {
			if col < 0 {
				continue
			}
			g := start + 3*col
			row[g] = strconv.FormatInt(ns.Raw[i], 10)
			row[g+1] = strconv.FormatInt(ns.Score[i], 10)
			row[g+2] = strconv.FormatInt(x.Scorers[i].Weight*ns.Score[i], 10)
		}
		if r == 0 {
			var f []string
			for _, fc := range x.Filtered {
				f = append(f, fmt.Sprintf("%s: %d", fc.Reason, fc.Nodes))
			}
			row = append(row, strconv.Itoa(x.Feasible), strings.Join(f, "; "))
		} else {
			row = append(row, "", "")
		}
		if l.mig {
			inst := ""
			if r == 0 && x.MIG != nil {
				inst = x.MIG.String()
			}
			row = append(row, inst)
		}
		_ = l.w.Write(row) // a bytes.Buffer does not fail
		l.row = row
	}
}

// cut says whether the log kept only part of its run's decisions.
func (l *explainLog) cut() bool { return l.kept < l.seen }

// addExplain adds explain.csv to res from the runs' logs (nothing when no
// log was kept), and a line saying what it holds; variant: the logs carry
// their setting's name (compare).
func addExplain(res *experiment.Results, s *scenario.Scenario, logs []*explainLog, variant bool) {
	var b bytes.Buffer
	size := 0
	for _, l := range logs {
		if l != nil {
			l.w.Flush()
			size += l.buf.Len()
		}
	}
	b.Grow(size + 4096)
	w := csv.NewWriter(&b)
	_ = w.Write(ExplainHeader(s, variant))
	w.Flush()
	runs, cut, kept, most := 0, 0, 0, 0
	for _, l := range logs {
		if l == nil {
			continue
		}
		runs++
		b.Write(l.buf.Bytes())
		l.buf = bytes.Buffer{} // its memory goes back as the file grows
		kept = l.max
		if l.cut() {
			cut++
			most = max(most, l.seen)
		}
	}
	if runs == 0 {
		return
	}
	res.Files[ExplainFile] = b.Bytes()
	res.Listing = strings.Replace(res.Listing, "report.html", ExplainFile+", report.html", 1)
	line := fmt.Sprintf("%s: why each task went to its node: the chosen node (rank 1), the %d next best and the best node of each other GPU model, with each scorer's raw and normalised score and its weighted part of the total (docs/explain.md)",
		ExplainFile, policy.DefaultExplainTop)
	if cut > 0 {
		line += fmt.Sprintf("; bounded to %d decisions over all runs: each run keeps its first %d, and %d of the %d runs made more (up to %d)",
			ExplainBudget, kept, cut, runs, most)
	}
	res.Tail = append(res.Tail, line)
}
