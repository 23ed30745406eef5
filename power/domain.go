package power

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wattsched/wattsched/hw"
)

// Domain is one power domain of a topology: a rack, a PDU, a row or any
// named level, fed through one limit. A domain holds the nodes that name it
// as theirs and every node of the domains below it.
type Domain struct {
	// Name is unique across the topology.
	Name string `yaml:"name" json:"name"`
	// Level is the kind of domain ("rack", "pdu", "row"...); free text,
	// reported but not interpreted.
	Level string `yaml:"level" json:"level,omitempty"`
	// Parent names the enclosing domain; empty at the top.
	Parent string `yaml:"parent" json:"parent,omitempty"`
	// Limit is the most power the domain's feed may carry.
	Limit hw.Watts `yaml:"limit_w" json:"limit_w"`
}

// Topology groups nodes into nested power domains. Every node belongs to
// exactly one innermost domain (Member) and through it to each ancestor.
// The zero Topology has no domains and constrains nothing.
type Topology struct {
	Domains []Domain `yaml:"domains" json:"domains"`
	// Member maps a node's name to the name of its innermost domain.
	Member map[string]string `yaml:"-" json:"-"`
}

// Empty reports whether the topology has no domains.
func (t *Topology) Empty() bool { return t == nil || len(t.Domains) == 0 }

// TopologyWarning is something about a topology that is legal but probably
// not meant: children whose limits add up beyond their parent's (power
// oversubscription by construction), or a domain with no nodes.
type TopologyWarning struct {
	Domain string
	Msg    string
}

func (w TopologyWarning) String() string { return fmt.Sprintf("domain %q: %s", w.Domain, w.Msg) }

// TopologyError is an error of Bind: the domain (its index in
// Topology.Domains, and name) or the node it is about, so that a caller
// can point at the line that declared it.
type TopologyError struct {
	// Index is the domain's index in Topology.Domains (-1: about a node).
	Index  int
	Domain string
	// Node is the node's name when the error is about a node.
	Node string
	Msg  string
}

func (e *TopologyError) Error() string { return "topology: " + e.Msg }

// Domains is a Topology bound to a cluster's nodes (by node index, the
// order the node names were given to Bind).
type Domains struct {
	// List is the domains in the order the topology declared them.
	List []Domain
	// Depth is each domain's distance from the top (0 for a top-level one).
	Depth []int
	// NodeCount is how many nodes each domain holds, descendants included.
	NodeCount []int
	// IdleW is the idle power of each domain's nodes, summed.
	IdleW []hw.Watts
	path  [][]int32 // per node: domain indices, innermost first
}

// Bind checks t against a cluster whose nodes are named names and idle at
// idle watts (same order), and returns the bound domains. Errors name the
// domain or node and the field; nothing is bound on error.
//
// Rules: names unique and non-empty; a limit finite and positive; a parent
// that exists; no cycle; every node in exactly one domain (when there are
// domains) and every member a node of the cluster; a domain's limit at or
// above its nodes' idle power (else nothing could ever run there).
func (t *Topology) Bind(names []string, idle []hw.Watts) (*Domains, []TopologyWarning, error) {
	if t.Empty() {
		return nil, nil, nil
	}
	if len(idle) != len(names) {
		return nil, nil, fmt.Errorf("topology: %d node names but %d idle powers", len(names), len(idle))
	}
	idx := make(map[string]int, len(t.Domains))
	for i, d := range t.Domains {
		switch {
		case strings.TrimSpace(d.Name) == "":
			return nil, nil, &TopologyError{Index: i, Msg: fmt.Sprintf("domains[%d].name: empty", i)}
		case math.IsNaN(float64(d.Limit)) || math.IsInf(float64(d.Limit), 0) || d.Limit <= 0:
			return nil, nil, &TopologyError{Index: i, Domain: d.Name, Msg: fmt.Sprintf("domain %q: limit_w: %v is not a positive finite number of watts", d.Name, float64(d.Limit))}
		}
		if _, dup := idx[d.Name]; dup {
			return nil, nil, &TopologyError{Index: i, Domain: d.Name, Msg: fmt.Sprintf("domains[%d].name: %q declared twice", i, d.Name)}
		}
		idx[d.Name] = i
	}
	parent := make([]int, len(t.Domains))
	for i, d := range t.Domains {
		parent[i] = -1
		if d.Parent == "" {
			continue
		}
		p, ok := idx[d.Parent]
		if !ok {
			return nil, nil, &TopologyError{Index: i, Domain: d.Name, Msg: fmt.Sprintf("domain %q: parent: no domain %q", d.Name, d.Parent)}
		}
		parent[i] = p
	}
	depth := make([]int, len(t.Domains))
	for i := range t.Domains {
		seen := 0
		for p := parent[i]; p >= 0; p = parent[p] {
			if seen++; seen > len(t.Domains) || p == i {
				return nil, nil, &TopologyError{Index: i, Domain: t.Domains[i].Name, Msg: fmt.Sprintf("domain %q: parent: cycle through %q", t.Domains[i].Name, t.Domains[p].Name)}
			}
			depth[i]++
		}
	}
	nodeIdx := make(map[string]int, len(names))
	for i, n := range names {
		nodeIdx[n] = i
	}
	members := make([]string, 0, len(t.Member))
	for n := range t.Member {
		members = append(members, n)
	}
	sort.Strings(members)
	for _, n := range members {
		if _, ok := nodeIdx[n]; !ok {
			return nil, nil, &TopologyError{Index: -1, Node: n, Msg: fmt.Sprintf("node %q (in domain %q): no such node in the cluster", n, t.Member[n])}
		}
		if _, ok := idx[t.Member[n]]; !ok {
			return nil, nil, &TopologyError{Index: -1, Node: n, Msg: fmt.Sprintf("node %q: domain: no domain %q", n, t.Member[n])}
		}
	}
	b := &Domains{List: append([]Domain(nil), t.Domains...), Depth: depth,
		NodeCount: make([]int, len(t.Domains)), IdleW: make([]hw.Watts, len(t.Domains)),
		path: make([][]int32, len(names))}
	for i, n := range names {
		dn, ok := t.Member[n]
		if !ok {
			return nil, nil, &TopologyError{Index: -1, Node: n, Msg: fmt.Sprintf("node %q: in no domain (every node needs one when domains are given)", n)}
		}
		for d := idx[dn]; d >= 0; d = parent[d] {
			b.path[i] = append(b.path[i], int32(d))
			b.NodeCount[d]++
			b.IdleW[d] += idle[i]
		}
	}
	var warn []TopologyWarning
	children := make([]hw.Watts, len(t.Domains))
	for i, d := range b.List {
		if b.IdleW[i] > d.Limit {
			return nil, nil, &TopologyError{Index: i, Domain: d.Name, Msg: fmt.Sprintf("domain %q: limit_w: %.0f W is below its %d nodes' idle power %.0f W",
				d.Name, float64(d.Limit), b.NodeCount[i], float64(b.IdleW[i]))}
		}
		if parent[i] >= 0 {
			children[parent[i]] += d.Limit
		}
	}
	for i, d := range b.List {
		if children[i] > d.Limit {
			warn = append(warn, TopologyWarning{d.Name, fmt.Sprintf("its children's limits add up to %.0f W, above its own %.0f W (oversubscribed by construction)",
				float64(children[i]), float64(d.Limit))})
		}
		if b.NodeCount[i] == 0 {
			warn = append(warn, TopologyWarning{d.Name, "holds no node"})
		}
	}
	return b, warn, nil
}

// Path is the domains node i belongs to, innermost first. The slice is
// shared; do not modify it.
func (d *Domains) Path(node int) []int32 {
	if d == nil {
		return nil
	}
	return d.path[node]
}

// Nodes is the number of nodes the domains were bound to (0 for a nil
// Domains).
func (d *Domains) Nodes() int {
	if d == nil {
		return 0
	}
	return len(d.path)
}

// Len is the number of domains (0 for a nil Domains).
func (d *Domains) Len() int {
	if d == nil {
		return 0
	}
	return len(d.List)
}

// DomainLoad is the power each domain of a Domains carries now: the sum of
// its nodes' power, kept up to date by Add.
type DomainLoad struct {
	d *Domains
	// W is each domain's current power, by domain index.
	W []hw.Watts
}

// NewLoad is a load with every domain at zero watts.
func (d *Domains) NewLoad() *DomainLoad {
	return &DomainLoad{d: d, W: make([]hw.Watts, d.Len())}
}

// Add adds dw (possibly negative) to every domain on node's path.
func (l *DomainLoad) Add(node int, dw hw.Watts) {
	if l == nil || l.d == nil {
		return
	}
	for _, i := range l.d.path[node] {
		l.W[i] += dw
	}
}

// Fits reports whether adding extra watts on node keeps every domain on its
// path within its limit (with LimitSlack, as AllowsRecomputed). When it does
// not, binding is the innermost domain that would be exceeded; otherwise -1.
func (l *DomainLoad) Fits(node int, extra hw.Watts) (binding int, ok bool) {
	if l == nil || l.d == nil {
		return -1, true
	}
	for _, i := range l.d.path[node] {
		if !Limit(l.d.List[i].Limit).AllowsRecomputed(l.W[i] + extra) {
			return int(i), false
		}
	}
	return -1, true
}

// Clone is a copy of the load that Add can change independently (nil for
// nil): a scheduler's scratch for the starts of one call.
func (l *DomainLoad) Clone() *DomainLoad {
	if l == nil {
		return nil
	}
	return &DomainLoad{d: l.d, W: append([]hw.Watts(nil), l.W...)}
}

// AddAll applies every change (Add for each).
func (l *DomainLoad) AddAll(changes []NodeWatts) {
	for _, c := range changes {
		l.Add(c.Node, c.W)
	}
}

// NodeWatts is a change of power on one node, for FitsAll.
type NodeWatts struct {
	Node int
	W    hw.Watts
}

// FitsAll is Fits for several changes at once (a gang, or a move): every
// domain must hold the sum of the changes on its nodes. binding is the
// exceeded domain of least depth-first index order (innermost of the first
// change's path that fails, then the next change's), -1 when all fit.
func (l *DomainLoad) FitsAll(changes []NodeWatts) (binding int, ok bool) {
	if l == nil || l.d == nil {
		return -1, true
	}
	extra := make(map[int32]hw.Watts, 4*len(changes))
	for _, c := range changes {
		for _, i := range l.d.path[c.Node] {
			extra[i] += c.W
		}
	}
	for _, c := range changes {
		for _, i := range l.d.path[c.Node] {
			if !Limit(l.d.List[i].Limit).AllowsRecomputed(l.W[i] + extra[i]) {
				return int(i), false
			}
		}
	}
	return -1, true
}

// Headroom is the least headroom of the domains on node's path (+Inf
// without domains; negative when one is over its limit).
func (l *DomainLoad) Headroom(node int) hw.Watts {
	h := hw.Watts(math.Inf(1))
	if l == nil || l.d == nil {
		return h
	}
	for _, i := range l.d.path[node] {
		h = min(h, l.d.List[i].Limit-l.W[i])
	}
	return h
}

// DomainStats records each domain's power over time for its report: peak,
// time-weighted quantiles and time above a threshold. Call Observe at every
// instant the load may have changed, with non-decreasing times in seconds;
// the load observed holds until the next call.
type DomainStats struct {
	l     *DomainLoad
	last  float64
	began bool
	segs  [][]seg // per domain, consecutive equal powers merged
}

type seg struct {
	w  hw.Watts
	dt float64
}

// NewStats starts recording l.
func NewStats(l *DomainLoad) *DomainStats {
	return &DomainStats{l: l, segs: make([][]seg, len(l.W))}
}

// Observe closes the interval since the previous call at the loads then
// in force, and opens one at the current loads.
func (s *DomainStats) Observe(t float64) {
	if s.began && t > s.last {
		dt := t - s.last
		for i := range s.segs {
			s.push(i, s.cur(i), dt)
		}
	}
	s.began, s.last = true, t
	for i, w := range s.l.W {
		s.setCur(i, w)
	}
}

// The current (open) power of domain i is kept as a trailing zero-length segment.
func (s *DomainStats) cur(i int) hw.Watts {
	if n := len(s.segs[i]); n > 0 {
		return s.segs[i][n-1].w
	}
	return 0
}

func (s *DomainStats) setCur(i int, w hw.Watts) {
	n := len(s.segs[i])
	if n > 0 && s.segs[i][n-1].dt == 0 {
		s.segs[i][n-1].w = w
		return
	}
	if n > 0 && s.segs[i][n-1].w == w {
		// Merge: reopen the last segment; push will extend it.
		return
	}
	s.segs[i] = append(s.segs[i], seg{w: w})
}

func (s *DomainStats) push(i int, w hw.Watts, dt float64) {
	n := len(s.segs[i])
	if n > 0 && s.segs[i][n-1].w == w {
		s.segs[i][n-1].dt += dt
		return
	}
	s.segs[i] = append(s.segs[i], seg{w: w, dt: dt})
}

// DomainSummary is one domain's power over a run.
type DomainSummary struct {
	Name  string
	Level string
	Limit hw.Watts
	Nodes int
	Mean  hw.Watts
	P50   hw.Watts
	P99   hw.Watts
	Peak  hw.Watts
	// Above is the seconds spent strictly above the threshold given to
	// Summary (as a fraction of the limit).
	Above   float64
	Seconds float64
}

// Summary is each domain's summary, in declared order; above is the
// threshold as a fraction of each domain's limit (1 = the limit itself).
func (s *DomainStats) Summary(above float64) []DomainSummary {
	out := make([]DomainSummary, len(s.segs))
	for i, ss := range s.segs {
		d := s.l.d.List[i]
		sum := DomainSummary{Name: d.Name, Level: d.Level, Limit: d.Limit, Nodes: s.l.d.NodeCount[i]}
		var energy float64
		sorted := make([]seg, 0, len(ss))
		for _, g := range ss {
			if g.dt <= 0 {
				continue
			}
			sorted = append(sorted, g)
			sum.Seconds += g.dt
			energy += float64(g.w) * g.dt
			sum.Peak = max(sum.Peak, g.w)
			if float64(g.w) > above*float64(d.Limit) {
				sum.Above += g.dt
			}
		}
		if sum.Seconds > 0 {
			sum.Mean = hw.Watts(energy / sum.Seconds)
			sort.Slice(sorted, func(a, b int) bool { return sorted[a].w < sorted[b].w })
			sum.P50 = quantile(sorted, sum.Seconds, 0.50)
			sum.P99 = quantile(sorted, sum.Seconds, 0.99)
		}
		out[i] = sum
	}
	return out
}

// quantile is the smallest power at or below which a fraction q of the time
// was spent (segments sorted by power).
func quantile(sorted []seg, total, q float64) hw.Watts {
	acc := 0.0
	for _, g := range sorted {
		acc += g.dt
		if acc >= q*total*(1-1e-12) {
			return g.w
		}
	}
	return sorted[len(sorted)-1].w
}

// DomainHour is one domain's power over one hour of a run: the
// time-weighted mean and the highest power held for any time in it.
type DomainHour struct {
	Mean, Max hw.Watts
}

// Hourly is each domain's power per hour of the run (out[domain][hour]),
// hour h covering [h x 3600 s, (h+1) x 3600 s) after the first Observe
// (the engines start at time 0); the last, partial hour is averaged over the time it covers. A
// power held for no time (two changes at the same instant) counts in no
// hour's max. It reads the record Summary reads, so it changes nothing
// that Summary reports; nil before the first interval closes.
func (s *DomainStats) Hourly() [][]DomainHour {
	const hour = 3600.0
	out := make([][]DomainHour, len(s.segs))
	for i, ss := range s.segs {
		var hours []DomainHour
		var t float64        // start of the current segment
		var energy []float64 // watt-seconds per hour
		var covered []float64
		for _, g := range ss {
			for rest, at := g.dt, t; rest > 0; {
				h := int(at / hour)
				for len(hours) <= h {
					hours = append(hours, DomainHour{})
					energy, covered = append(energy, 0), append(covered, 0)
				}
				dt := min(rest, float64(h+1)*hour-at)
				if dt <= 0 { // at sits on the hour's end by rounding
					dt = min(rest, 1e-9)
				}
				energy[h] += float64(g.w) * dt
				covered[h] += dt
				hours[h].Max = max(hours[h].Max, g.w)
				at += dt
				rest -= dt
			}
			t += g.dt
		}
		for h := range hours {
			if covered[h] > 0 {
				hours[h].Mean = hw.Watts(energy[h] / covered[h])
			}
		}
		out[i] = hours
	}
	return out
}
