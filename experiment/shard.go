package experiment

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
	"sort"
	"sync"
)

// Shards splits a command's independent runs over processes and puts them
// back together: with --shard i/n a process runs only the runs whose
// ordinal k (over the whole command, in the order the command asks for
// them) has k mod n = i, and records their results; `wattsched merge`
// then runs the command once more with every shard's records, taking each
// run's result from them instead of running it, so that everything after
// the runs (aggregation, tables, plots) is computed exactly as in a single
// run and gives the same bytes.
//
// This holds for commands whose list of runs does not depend on earlier
// runs' results (all that use ShardedRun today); otherwise the merge finds
// a run no shard recorded and says so.
type Shards struct {
	Index, Count int

	mu      sync.Mutex
	merge   map[string][]byte // merging: every shard's records
	out     map[string][]byte // sharding: this process's records
	seen    int               // runs asked for so far
	calls   int
	failure error
	// merging: what the shards saw (calls and runs), and records used
	wantCalls, wantSeen, used int
}

// NewShard is shard i of n (0 <= i < n).
func NewShard(i, n int) (*Shards, error) {
	if n < 1 || n > 100000 || i < 0 || i >= n {
		return nil, fmt.Errorf("shard %d/%d: want i/n with 0 <= i < n <= 100000", i, n)
	}
	return &Shards{Index: i, Count: n, out: map[string][]byte{}}, nil
}

// NewMerge takes every run's result from records (the union of the
// shards' Records); calls and runs are what every shard saw (Calls, Seen).
func NewMerge(records map[string][]byte, calls, runs int) *Shards {
	return &Shards{merge: records, wantCalls: calls, wantSeen: runs}
}

// Calls and Seen count the ShardedRun calls and the runs they asked for.
func (s *Shards) Calls() int { return s.calls }

// Seen is the number of runs asked for so far (all shards, this one's and
// the others').
func (s *Shards) Seen() int { return s.seen }

// CheckMerged reports whether a merge asked for the same runs as its
// shards and used every record: a shard that stopped early, or records
// from another command, show here before anything is written.
func (s *Shards) CheckMerged() error {
	if s == nil || s.merge == nil {
		return nil
	}
	if s.calls != s.wantCalls || s.seen != s.wantSeen || s.used != len(s.merge) {
		return fmt.Errorf("merge: the command asked for %d runs in %d batches and used %d of %d records; the shards saw %d runs in %d batches",
			s.seen, s.calls, s.used, len(s.merge), s.wantSeen, s.wantCalls)
	}
	return nil
}

// Sharding reports whether this process runs one shard.
func (s *Shards) Sharding() bool { return s != nil && s.out != nil }

// Records are this shard's recorded results by key.
func (s *Shards) Records() map[string][]byte { return s.out }

// Recorded is the number of runs this shard recorded.
func (s *Shards) Recorded() int { return len(s.out) }

// Err is the first failure of a run this shard ran.
func (s *Shards) Err() error { return s.failure }

// EncodeRecords and DecodeRecords are the shard file's format (gob).
func EncodeRecords(r map[string][]byte) ([]byte, error) {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type rec struct {
		Key   string
		Value []byte
	}
	recs := make([]rec, len(keys))
	for i, k := range keys {
		recs[i] = rec{k, r[k]}
	}
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(recs)
	return b.Bytes(), err
}

// DecodeRecords reads a shard file's records into into, refusing a key
// that is already there (two shards ran the same run).
func DecodeRecords(data []byte, file string, into map[string][]byte) error {
	var recs []struct {
		Key   string
		Value []byte
	}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&recs); err != nil {
		return fmt.Errorf("%s: not a wattsched shard file: %w", file, err)
	}
	for _, r := range recs {
		if _, dup := into[r.Key]; dup {
			return fmt.Errorf("%s: run %q is also in another shard", file, r.Key)
		}
		into[r.Key] = r.Value
	}
	return nil
}

// ShardedRun is Parallel for runs that return a value (gob-encodable,
// exported fields only). Without shards (sh nil) it runs everything; in a
// shard it runs its own runs, records their results and leaves the zero
// value for the others; in a merge it decodes every result.
func ShardedRun[T any](sh *Shards, n, workers int, run func(i int) (T, error), progress func(done, total int, what string), label func(i int) string) ([]T, []error) {
	out := make([]T, n)
	if sh == nil {
		errs := Parallel(n, workers, func(i int) (err error) {
			out[i], err = run(i)
			return err
		}, progress, label)
		return out, errs
	}
	sh.mu.Lock()
	call, first := sh.calls, sh.seen
	sh.calls++
	sh.seen += n
	sh.mu.Unlock()
	key := func(i int) string { return fmt.Sprintf("%d/%d %s", call, i, label(i)) }
	errs := make([]error, n)
	if sh.merge != nil {
		for i := range out {
			b, ok := sh.merge[key(i)]
			if !ok {
				errs[i] = fmt.Errorf("merge: no shard recorded run %q: the shards must come from the same command and version, every index 0..n-1 present", key(i))
				continue
			}
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&out[i]); err != nil {
				errs[i] = fmt.Errorf("merge: run %q: %w", key(i), err)
			}
			sh.mu.Lock()
			sh.used++
			sh.mu.Unlock()
		}
		return out, errs
	}
	var own []int
	for i := 0; i < n; i++ {
		if (first+i)%sh.Count == sh.Index {
			own = append(own, i)
		}
	}
	// The others get a zero value, allocated when T is a pointer, so that
	// code after the runs does not fail on nil before the last run of the
	// command was asked for (its results are not written by a shard).
	if t := reflect.TypeFor[T](); t.Kind() == reflect.Pointer {
		for i := range out {
			out[i] = reflect.New(t.Elem()).Interface().(T)
		}
	}
	perr := Parallel(len(own), workers, func(k int) error {
		i := own[k]
		v, err := run(i)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(v); err != nil {
			return fmt.Errorf("shard: record run %q: %w", key(i), err)
		}
		out[i] = v
		sh.mu.Lock()
		sh.out[key(i)] = b.Bytes()
		sh.mu.Unlock()
		return nil
	}, progress, func(k int) string { return label(own[k]) })
	for k, err := range perr {
		errs[own[k]] = err
		if err != nil {
			sh.mu.Lock()
			if sh.failure == nil {
				sh.failure = err
			}
			sh.mu.Unlock()
		}
	}
	return out, errs
}
