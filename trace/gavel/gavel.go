// Package gavel reads Gavel's measured throughput tables (isolated and
// space-shared pairs of DL training jobs per worker type, the data the
// EaCO paper's simulations were built on) and Gavel's job traces in both
// of their layouts, and embeds the V100 single-GPU throughputs, Gavel's
// simulation throughputs for its three worker types, one Philly-derived
// trace and three of Gavel's physical-cluster traces (data/README.md;
// Narayanan et al., OSDI'20, MIT license).
package gavel

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

//go:embed data/v100_scale1.json
var v100JSON []byte

//go:embed data/msr-ed69ec.trace
var msrTrace []byte

//go:embed data/simulation_throughputs.json
var simulationJSON []byte

// EmbeddedThroughputs is the name the embedded throughput file is read
// under (in errors and outputs).
const EmbeddedThroughputs = "gavel:v100_scale1.json"

// EmbeddedSimulation is the name the embedded copy of Gavel's
// simulation_throughputs.json (worker types k80, p100 and v100, every job
// type and scale factor) is read under.
const EmbeddedSimulation = "gavel:simulation_throughputs.json"

// Workers are the worker types of Gavel's simulated clusters (its
// cluster_spec: v100, p100, k80), the ones EmbeddedSimulation holds.
var Workers = []string{"k80", "p100", "v100"}

// EmbeddedTrace names the embedded trace.
const EmbeddedTrace = "gavel:msr-ed69ec.trace"

// Key is one job configuration: a job type on Scale GPUs.
type Key struct {
	Type  string
	Scale int
}

func (k Key) String() string { return fmt.Sprintf("('%s', %d)", k.Type, k.Scale) }

// Pair is the measured throughput (steps/s) of job A and job B when they
// space-share one GPU set.
type Pair struct {
	A, B         Key
	RateA, RateB float64
}

// Throughputs is one worker type's table: isolated rates and measured
// co-located pairs (each unordered pair once, A <= B by key order).
type Throughputs struct {
	// Source names the file the table was read from ("" when built by
	// NewThroughputs).
	Source string
	Worker string
	// Keys are the configurations, sorted by type then scale.
	Keys     []Key
	Isolated map[Key]float64
	Pairs    []Pair
	// Unrunnable are the keys whose isolated rate is 0 on this worker
	// type (the job does not run there), sorted.
	Unrunnable []Key
	pairIdx    map[[2]Key]int
}

// Pair returns the measured rates of a and b co-located (rate of a first).
func (t *Throughputs) Pair(a, b Key) (ra, rb float64, ok bool) {
	if i, ok := t.pairIdx[[2]Key{a, b}]; ok {
		return t.Pairs[i].RateA, t.Pairs[i].RateB, true
	}
	if i, ok := t.pairIdx[[2]Key{b, a}]; ok {
		return t.Pairs[i].RateB, t.Pairs[i].RateA, true
	}
	return 0, 0, false
}

// NewThroughputs builds a table from another data set's measurements in
// Gavel's shape: isolated rates per key and measured pairs, kept in the
// order given. Every pair's keys need a positive isolated rate, rates must
// be numbers >= 0, and each unordered pair may appear once.
func NewThroughputs(worker string, isolated map[Key]float64, pairs []Pair) (*Throughputs, error) {
	t := &Throughputs{Worker: worker, Isolated: map[Key]float64{}, pairIdx: map[[2]Key]int{}}
	for k, v := range isolated {
		if !validRate(v) || v == 0 {
			return nil, fmt.Errorf("%s: isolated rate of %v is %v, want a positive number", worker, k, v)
		}
		t.Isolated[k] = v
		t.Keys = append(t.Keys, k)
	}
	slices.SortFunc(t.Keys, cmpKey)
	for i, p := range pairs {
		for _, k := range []Key{p.A, p.B} {
			if _, ok := t.Isolated[k]; !ok {
				return nil, fmt.Errorf("%s: pair %d: %v has no isolated rate", worker, i, k)
			}
		}
		if !validRate(p.RateA) || !validRate(p.RateB) {
			return nil, fmt.Errorf("%s: pair %d (%v, %v): rates %v, %v are not numbers >= 0", worker, i, p.A, p.B, p.RateA, p.RateB)
		}
		_, dup := t.pairIdx[[2]Key{p.A, p.B}]
		_, dup2 := t.pairIdx[[2]Key{p.B, p.A}]
		if dup || dup2 {
			return nil, fmt.Errorf("%s: pair %d (%v, %v) appears twice", worker, i, p.A, p.B)
		}
		t.pairIdx[[2]Key{p.A, p.B}] = len(t.Pairs)
		t.Pairs = append(t.Pairs, p)
	}
	return t, nil
}

// ParseKey parses Gavel's rendering of a Python tuple: ('Type', 1).
func ParseKey(s string) (Key, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "('") || !strings.HasSuffix(t, ")") {
		return Key{}, fmt.Errorf("key %q is not ('job type', scale)", s)
	}
	body := t[2 : len(t)-1]
	i := strings.LastIndex(body, "',")
	if i < 0 {
		return Key{}, fmt.Errorf("key %q is not ('job type', scale)", s)
	}
	typ := body[:i]
	sc, err := strconv.Atoi(strings.TrimSpace(body[i+2:]))
	if err != nil || sc < 1 || sc > 64 {
		return Key{}, fmt.Errorf("key %q: scale factor is not an integer in 1..64", s)
	}
	if typ == "" || strings.ContainsAny(typ, "'\n") {
		return Key{}, fmt.Errorf("key %q: bad job type", s)
	}
	return Key{Type: typ, Scale: sc}, nil
}

func validRate(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && v < 1e9 }

// ReadThroughputs reads worker type worker's table from a Gavel
// throughput file (name is used in errors, which give the JSON path and
// the field: `file: $.v100["('A', 1)"]["('B', 1)"][1]: ...`). Rates are
// numbers of steps/s >= 0; a key whose isolated rate is 0 (the job does
// not run on this worker type, as ResNet-50 with batch size 128 on 2-8
// K80s) is listed in Unrunnable and left out of Keys, Isolated and Pairs.
// A pair's two rows, where both are given, must agree ([a, b] in one, [b,
// a] in the other), and its keys must have one scale factor (Gavel pairs
// only jobs of equal scale factors).
func ReadThroughputs(name string, data []byte, worker string) (*Throughputs, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at := data[:min(int(max(se.Offset-1, 0)), len(data))]
			line := 1 + bytes.Count(at, []byte("\n"))
			col := len(at) - bytes.LastIndexByte(at, '\n')
			hint := ""
			// Python's json writes NaN and Infinity, which JSON lacks.
			if rest := data[len(at):]; bytes.HasPrefix(rest, []byte("NaN")) || bytes.HasPrefix(rest, []byte("Infinity")) || bytes.HasPrefix(rest, []byte("-Infinity")) {
				hint = " (NaN and Infinity are not JSON numbers: rates must be finite)"
			}
			return nil, fmt.Errorf("%s: line %d, column %d: %w%s", name, line, col, err, hint)
		}
		return nil, fmt.Errorf("%s: $: %w", name, err)
	}
	raw, ok := top[worker]
	if !ok {
		have := make([]string, 0, len(top))
		for w := range top {
			have = append(have, w)
		}
		slices.Sort(have)
		return nil, fmt.Errorf("%s: $.%s: worker type missing (the file has %s)", name, worker, strings.Join(have, ", "))
	}
	var table map[string]json.RawMessage
	if err := json.Unmarshal(raw, &table); err != nil {
		return nil, fmt.Errorf("%s: $.%s: want an object of keys ('job type', scale): %w", name, worker, err)
	}
	names := make([]string, 0, len(table))
	for k := range table {
		names = append(names, k)
	}
	slices.Sort(names)
	rows := make(map[string]map[string]json.RawMessage, len(table))
	for _, n := range names {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(table[n], &row); err != nil {
			return nil, fmt.Errorf("%s: $.%s[%q]: want an object of null and co-tenants: %w", name, worker, n, err)
		}
		rows[n] = row
	}
	t := &Throughputs{Source: name, Worker: worker, Isolated: map[Key]float64{}, pairIdx: map[[2]Key]int{}}
	keyOf := map[string]Key{}
	nameOf := map[Key]string{}
	zero := map[Key]bool{}
	for _, n := range names {
		path := fmt.Sprintf("$.%s[%q]", worker, n)
		k, err := ParseKey(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, path, err)
		}
		if o, dup := nameOf[k]; dup {
			return nil, fmt.Errorf("%s: %s: the key %v is also written %q", name, path, k, o)
		}
		keyOf[n], nameOf[k] = k, n
		iso, ok := rows[n]["null"]
		if !ok {
			return nil, fmt.Errorf("%s: %s.null: isolated throughput missing", name, path)
		}
		var pv *float64 // JSON null is no number
		if err := json.Unmarshal(iso, &pv); err != nil || pv == nil || !validRate(*pv) {
			return nil, fmt.Errorf("%s: %s.null: isolated throughput is not a number of steps/s >= 0", name, path)
		}
		v := *pv
		if v == 0 {
			zero[k] = true
			t.Unrunnable = append(t.Unrunnable, k)
			continue
		}
		t.Isolated[k] = v
		t.Keys = append(t.Keys, k)
	}
	slices.SortFunc(t.Keys, cmpKey)
	slices.SortFunc(t.Unrunnable, cmpKey)
	// Every row's co-located rates, in the order of the file's sorted
	// names; the pair is kept from the row of its smaller key, and from the
	// other row when only that one gives it.
	type entry struct {
		a, b Key
		v    [2]float64
		path string
	}
	var entries []entry
	given := map[[2]Key][2]float64{}
	for _, n := range names {
		a := keyOf[n]
		others := make([]string, 0, len(rows[n]))
		for o := range rows[n] {
			if o != "null" {
				others = append(others, o)
			}
		}
		slices.Sort(others)
		for _, o := range others {
			path := fmt.Sprintf("$.%s[%q][%q]", worker, n, o)
			b, err := ParseKey(o)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, path, err)
			}
			if _, ok := nameOf[b]; !ok {
				return nil, fmt.Errorf("%s: %s: co-tenant has no isolated throughput in this worker type", name, path)
			}
			if a.Scale != b.Scale {
				return nil, fmt.Errorf("%s: %s: co-tenants on %d and %d GPUs (Gavel pairs only jobs of one scale factor)", name, path, a.Scale, b.Scale)
			}
			var pv []*float64
			if err := json.Unmarshal(rows[n][o], &pv); err != nil || len(pv) != 2 {
				return nil, fmt.Errorf("%s: %s: want [this job's steps/s, other job's steps/s]", name, path)
			}
			v := make([]float64, 2)
			for i, x := range pv {
				if x == nil || !validRate(*x) {
					return nil, fmt.Errorf("%s: %s[%d]: throughput is not a number of steps/s >= 0", name, path, i)
				}
				v[i] = *x
			}
			if _, dup := given[[2]Key{a, b}]; dup {
				return nil, fmt.Errorf("%s: %s: the pair is given twice in this row", name, path)
			}
			given[[2]Key{a, b}] = [2]float64{v[0], v[1]}
			entries = append(entries, entry{a, b, [2]float64{v[0], v[1]}, path})
		}
	}
	var later []entry
	for _, e := range entries {
		if r, ok := given[[2]Key{e.b, e.a}]; ok && (r[0] != e.v[1] || r[1] != e.v[0]) {
			return nil, fmt.Errorf("%s: %s: [%v, %v] disagrees with the pair's other row, [%v, %v] (want it reversed)", name, e.path, e.v[0], e.v[1], r[0], r[1])
		}
		if zero[e.a] || zero[e.b] {
			continue
		}
		if cmpKey(e.a, e.b) > 0 {
			if _, ok := given[[2]Key{e.b, e.a}]; !ok {
				later = append(later, e)
			}
			continue
		}
		t.addPair(Pair{A: e.a, B: e.b, RateA: e.v[0], RateB: e.v[1]})
	}
	for _, e := range later {
		t.addPair(Pair{A: e.b, B: e.a, RateA: e.v[1], RateB: e.v[0]})
	}
	return t, nil
}

func (t *Throughputs) addPair(p Pair) {
	t.pairIdx[[2]Key{p.A, p.B}] = len(t.Pairs)
	t.Pairs = append(t.Pairs, p)
}

// Rate is the isolated throughput (steps/s) of k on the worker type.
func (t *Throughputs) Rate(k Key) (stepsPerSec float64, ok bool) {
	v, ok := t.Isolated[k]
	return v, ok
}

// Check says why k cannot run from this table (nil when it can): a job
// type the table lacks (the error lists the table's types), a scale
// factor it has no measurement for (the error lists the measured ones), or
// an isolated throughput of 0 on this worker type.
func (t *Throughputs) Check(k Key) error {
	if _, ok := t.Isolated[k]; ok {
		return nil
	}
	if slices.Contains(t.Unrunnable, k) {
		return fmt.Errorf("%q on %d GPU(s) has throughput 0 on %s in %s (it does not run there)", k.Type, k.Scale, t.Worker, t.Source)
	}
	var scales []string
	for _, c := range slices.Concat(t.Keys, t.Unrunnable) {
		if c.Type == k.Type {
			scales = append(scales, strconv.Itoa(c.Scale))
		}
	}
	if len(scales) > 0 {
		return fmt.Errorf("%q has no %s throughput on %d GPU(s) in %s (scale factors there: %s)", k.Type, t.Worker, k.Scale, t.Source, strings.Join(scales, ", "))
	}
	return fmt.Errorf("unknown job type %q: not in %s for %s (job types there: %s)", k.Type, t.Source, t.Worker, strings.Join(t.Types(), "; "))
}

// HasType reports whether the table has typ at some scale factor
// (counting keys measured at 0 steps/s).
func (t *Throughputs) HasType(typ string) bool {
	for _, k := range slices.Concat(t.Keys, t.Unrunnable) {
		if k.Type == typ {
			return true
		}
	}
	return false
}

// Types lists the table's job types (runnable keys), sorted.
func (t *Throughputs) Types() []string {
	var out []string
	for _, k := range t.Keys {
		if len(out) == 0 || out[len(out)-1] != k.Type {
			out = append(out, k.Type)
		}
	}
	return out
}

// PlaceholderPairs lists the measured pairs whose co-located rates both
// equal the jobs' isolated rates exactly: no slowdown at all, which
// Gavel's data holds where a pair was not really measured (14 of the
// V100's 351 single-GPU pairs). In table order.
func (t *Throughputs) PlaceholderPairs() []Pair {
	var out []Pair
	for _, p := range t.Pairs {
		if p.RateA == t.Isolated[p.A] && p.RateB == t.Isolated[p.B] {
			out = append(out, p)
		}
	}
	return out
}

func cmpKey(a, b Key) int {
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return a.Scale - b.Scale
}

// Simulation is worker type worker's table from the embedded copy of
// Gavel's simulation_throughputs.json (worker: one of Workers).
func Simulation(worker string) (*Throughputs, error) {
	return ReadThroughputs(EmbeddedSimulation, simulationJSON, worker)
}

// V100 is the embedded V100 single-GPU table.
func V100() (*Throughputs, error) { return ReadThroughputs(EmbeddedThroughputs, v100JSON, "v100") }

// MSR is the embedded trace.
func MSR() ([]Job, error) { return ReadTrace(EmbeddedTrace, bytes.NewReader(msrTrace)) }
