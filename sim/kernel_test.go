package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// probe is a model that records what the kernel does with its events:
// an event is "name" (asks for a decision when it ends with "!"), stale
// when its name is in the stale set.
type probe struct {
	k      *Kernel[string]
	stales map[string]bool
	log    []string
	post   map[string][]posted // handling an event posts these
	jobs   map[string]int      // handling an event ends this job
	done   func() bool
}

type posted struct {
	in job.Time
	ev string
}

func (p *probe) stale(ev string) bool { return p.stales[ev] }
func (p *probe) advance(from, to job.Time) {
	p.log = append(p.log, fmt.Sprintf("advance %d-%d", from, to))
}
func (p *probe) handle(ev string) (bool, error) {
	p.log = append(p.log, fmt.Sprintf("%d %s", p.k.Now(), ev))
	for _, x := range p.post[ev] {
		p.k.Post(p.k.Now()+x.in, x.ev)
	}
	if j, ok := p.jobs[ev]; ok {
		return false, p.k.End(j)
	}
	return strings.HasSuffix(ev, "!"), nil
}
func (p *probe) decide() error {
	p.k.Decisions++
	p.log = append(p.log, fmt.Sprintf("%d decide", p.k.Now()))
	return nil
}
func (p *probe) finished() bool { return p.done != nil && p.done() }
func (p *probe) settled() error { p.log = append(p.log, "settled"); return nil }

// The kernel's rule, step by step: (time, sequence) order, stale events
// dropped without moving the clock, one batch per time (events posted at
// the current time join it), one decision per batch that asks for one.
func TestKernelRule(t *testing.T) {
	k := &Kernel[string]{}
	p := &probe{k: k, stales: map[string]bool{"old": true},
		post: map[string][]posted{"a!": {{0, "a2"}, {5, "c!"}}}}
	k.Post(10, "b")
	k.Post(3, "a!")
	k.Post(10, "b2!")
	k.Post(40, "old") // stale at the end: the clock stays at 10
	if err := k.Run(p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"advance 0-3", "3 a!", "3 a2", "3 decide", "settled", // a2 was posted at 3 while handling a!
		"advance 3-8", "8 c!", "8 decide", "settled",
		"advance 8-10", "10 b", "10 b2!", "10 decide", "settled", // b asks nothing, b2! does: one decision
	}
	if diff := cmp.Diff(want, p.log); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if k.Now() != 10 || k.Events != 5 || k.Decisions != 3 {
		t.Errorf("now %d, %d events, %d decisions; want 10, 5, 3", k.Now(), k.Events, k.Decisions)
	}
}

// Ties in time go by posting order, whatever the heap does, over many
// random postings.
func TestKernelOrderProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		k := &Kernel[string]{}
		p := &probe{k: k}
		type ev struct {
			at  job.Time
			seq int
		}
		var evs []ev
		for i := 0; i < 200; i++ {
			e := ev{job.Time(r.IntN(20)), i}
			evs = append(evs, e)
			k.Post(e.at, fmt.Sprintf("%d:%d", e.at, e.seq))
		}
		if err := k.Run(p); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range p.log {
			if f := strings.Fields(l); len(f) == 2 && f[0] != "advance" {
				got = append(got, f[1])
			}
		}
		// Expected: stable sort by time.
		var want []string
		for at := job.Time(0); at < 20; at++ {
			for _, e := range evs {
				if e.at == at {
					want = append(want, fmt.Sprintf("%d:%d", e.at, e.seq))
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (-want +got):\n%s", trial, diff)
		}
	}
}

func TestKernelErrors(t *testing.T) {
	k := &Kernel[string]{}
	k.Track(1)
	p := &probe{k: k, jobs: map[string]int{"end": 0}}
	k.Post(1, "end")
	k.Post(2, "end")
	if err := k.Run(p); err == nil || !strings.Contains(err.Error(), "job 0 ended twice") {
		t.Errorf("second end: %v", err)
	}
	k = &Kernel[string]{}
	p = &probe{k: k, post: map[string][]posted{"x": {{-1, "past"}}}}
	k.Post(5, "x")
	if err := k.Run(p); err == nil || !strings.Contains(err.Error(), "before now") {
		t.Errorf("event in the past: %v", err)
	}
	// The run ends once every job has ended, whatever is left queued.
	k = &Kernel[string]{}
	k.Track(1)
	p = &probe{k: k, jobs: map[string]int{"end": 0}}
	p.done = func() bool { return k.Open() == 0 }
	k.Post(1, "end")
	k.Post(100, "wake!")
	if err := k.Run(p); err != nil || k.Now() != 1 || k.Open() != 0 || !k.Ended(0) {
		t.Errorf("err %v, now %d, open %d", err, k.Now(), k.Open())
	}
}

// The ledger's energy is the exact integral of piecewise-constant power:
// random power steps of several components, integrated lazily, equal the
// sum of power x duration computed directly, and Total is the sum of the
// components.
func TestLedgerIsTheIntegralOfPower(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var l Ledger
	const comps = 4
	for c := 0; c < comps; c++ {
		l.Add(fmt.Sprint("c", c))
	}
	want := make([]float64, comps)
	cur := make([]float64, comps)
	last := make([]job.Time, comps)
	now := job.Time(0)
	for step := 0; step < 1000; step++ {
		now += job.Time(r.IntN(5000))
		c := r.IntN(comps)
		want[c] += cur[c] * float64(now-last[c]) / 1000
		cur[c], last[c] = r.Float64()*500, now
		l.Set(c, now, hw.Watts(cur[c]))
		if r.IntN(10) == 0 {
			l.Charge(c, 7, 0)
			want[c] += 7
		}
	}
	var sum float64
	for c := 0; c < comps; c++ {
		want[c] += cur[c] * float64(now-last[c]) / 1000
		l.Advance(c, now)
		if got := float64(l.Energy(c)); math.Abs(got-want[c]) > 1e-9*want[c] {
			t.Errorf("%s: %v J, want %v J", l.Name(c), got, want[c])
		}
		sum += float64(l.Energy(c))
	}
	if math.Abs(float64(l.Total())-sum) > 1e-9*sum {
		t.Errorf("total %v J, components %v J", l.Total(), sum)
	}
	// Accrue is power x duration: 150 W for 2.5 s.
	if j := l.Accrue(0, 150, 0, 2500); j != 375 {
		t.Errorf("Accrue = %v J, want 375", j)
	}
}

// The ledger books every term to the hours of simulated time it covers: a
// Set power across an hour boundary is split at it, an Accrue interval
// likewise, a lump goes to its hour; the hours sum to the total.
func TestLedgerHourly(t *testing.T) {
	var l Ledger
	a, b, c := l.Add("a"), l.Add("b"), l.Add("c")
	const h = 3600 * 1000
	l.Set(a, 0, 100)           // 100 W from 0 ...
	l.Set(a, h+h/2, 0)         // ... to 1.5 h: 360 kJ in hour 0, 180 kJ in hour 1
	l.Accrue(b, 200, h/2, 3*h) // 200 W from 0.5 h to 3 h
	l.Charge(c, 1000, 2*h+5)   // a lump in hour 2
	got := l.Hourly()
	want := []hw.Joules{360e3 + 360e3, 180e3 + 720e3, 720e3 + 1000}
	if len(got) != len(want) {
		t.Fatalf("hours %v, want %v", got, want)
	}
	var sum hw.Joules
	for i := range want {
		if !near(got[i], want[i]) {
			t.Errorf("hour %d: %v J, want %v", i, got[i], want[i])
		}
		sum += got[i]
	}
	if !near(sum, l.Total()) {
		t.Errorf("hours sum to %v J, total %v", sum, l.Total())
	}
}
