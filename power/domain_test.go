package power_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// A row of 1,000 W over two racks of 600 W each (oversubscribed: 1,200 W
// of children under 1,000 W), four nodes idling at 100 W each.
func twoRacks() *power.Topology {
	return &power.Topology{
		Domains: []power.Domain{
			{Name: "row-a", Level: "row", Limit: 1000},
			{Name: "rack-1", Level: "rack", Parent: "row-a", Limit: 600},
			{Name: "rack-2", Level: "rack", Parent: "row-a", Limit: 600},
		},
		Member: map[string]string{"n1": "rack-1", "n2": "rack-1", "n3": "rack-2", "n4": "rack-2"},
	}
}

var fourNodes = []string{"n1", "n2", "n3", "n4"}
var idle100 = []hw.Watts{100, 100, 100, 100}

func TestBindPathsAndWarnings(t *testing.T) {
	d, warn, err := twoRacks().Bind(fourNodes, idle100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int32{1, 0}, d.Path(0)); diff != "" {
		t.Errorf("n1's path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int32{2, 0}, d.Path(3)); diff != "" {
		t.Errorf("n4's path (-want +got):\n%s", diff)
	}
	// row-a holds all four nodes: 4 x 100 W idle; each rack two: 200 W.
	if diff := cmp.Diff([]hw.Watts{400, 200, 200}, d.IdleW); diff != "" {
		t.Errorf("idle per domain (-want +got):\n%s", diff)
	}
	if len(warn) != 1 || warn[0].Domain != "row-a" || !strings.Contains(warn[0].Msg, "1200 W") {
		t.Errorf("want one oversubscription warning on row-a (600+600 = 1200 W > 1000 W), got %v", warn)
	}
}

func TestBindRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*power.Topology)
		want string
	}{
		{"node in no domain", func(tp *power.Topology) { delete(tp.Member, "n3") }, `node "n3": in no domain`},
		{"unknown node", func(tp *power.Topology) { tp.Member["n9"] = "rack-1" }, `node "n9"`},
		{"unknown domain", func(tp *power.Topology) { tp.Member["n1"] = "rack-9" }, `no domain "rack-9"`},
		{"unknown parent", func(tp *power.Topology) { tp.Domains[1].Parent = "row-z" }, `parent: no domain "row-z"`},
		{"duplicate", func(tp *power.Topology) { tp.Domains[2].Name = "rack-1" }, "declared twice"},
		{"cycle", func(tp *power.Topology) { tp.Domains[0].Parent = "rack-1" }, "cycle"},
		{"zero limit", func(tp *power.Topology) { tp.Domains[1].Limit = 0 }, "limit_w"},
		// rack-2's nodes idle at 2 x 100 = 200 W > 150 W.
		{"below idle", func(tp *power.Topology) { tp.Domains[2].Limit = 150 }, `domain "rack-2": limit_w: 150 W is below its 2 nodes' idle power 200 W`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := twoRacks()
			tc.edit(tp)
			_, _, err := tp.Bind(fourNodes, idle100)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestDomainLoadFitsNamesTheBindingDomain(t *testing.T) {
	d, _, err := twoRacks().Bind(fourNodes, idle100)
	if err != nil {
		t.Fatal(err)
	}
	l := d.NewLoad()
	for i, w := range idle100 {
		l.Add(i, w)
	}
	// rack-1 at 200 W: +400 W reaches its 600 W exactly (fits), +401 W does not.
	if b, ok := l.Fits(0, 400); !ok || b != -1 {
		t.Errorf("+400 W on n1: want fits, got binding %d ok %v", b, ok)
	}
	if b, ok := l.Fits(0, 401); ok || d.List[b].Name != "rack-1" {
		t.Errorf("+401 W on n1: want rack-1 binding, got %d ok %v", b, ok)
	}
	// Fill rack-2 to 550 W: the row is at 750 W. +300 W on n1 leaves rack-1
	// at 500 W (fits) but the row at 1,050 W > 1,000 W: the row binds.
	l.Add(2, 350)
	if b, ok := l.Fits(0, 300); ok || d.List[b].Name != "row-a" {
		t.Errorf("+300 W on n1 with the row at 750 W: want row-a binding, got %d ok %v", b, ok)
	}
	// Headroom of n1: min(rack-1 600-200, row 1000-750) = 250 W.
	if h := l.Headroom(0); h != 250 {
		t.Errorf("headroom of n1: want 250 W, got %v", h)
	}
	// A gang of +150 W on n1 and +150 W on n2: rack-1 500 W fits, row 1,050 W does not.
	if b, ok := l.FitsAll([]power.NodeWatts{{Node: 0, W: 150}, {Node: 1, W: 150}}); ok || d.List[b].Name != "row-a" {
		t.Errorf("gang of 2 x 150 W: want row-a binding, got %d ok %v", b, ok)
	}
	if _, ok := l.FitsAll([]power.NodeWatts{{Node: 0, W: 100}, {Node: 1, W: 100}}); !ok {
		t.Errorf("gang of 2 x 100 W: the row reaches 950 W, want fits")
	}
}

func TestDomainStatsHandComputed(t *testing.T) {
	d, _, err := twoRacks().Bind(fourNodes, idle100)
	if err != nil {
		t.Fatal(err)
	}
	l := d.NewLoad()
	for i, w := range idle100 {
		l.Add(i, w)
	}
	s := power.NewStats(l)
	s.Observe(0) // rack-1 200 W from t=0
	l.Add(0, 380)
	s.Observe(10) // rack-1 580 W from t=10
	l.Add(0, -380)
	s.Observe(11) // back to 200 W from t=11
	s.Observe(100)
	got := s.Summary(0.95)[1]
	// rack-1: 200 W for 10 s + 89 s = 99 s, 580 W for 1 s; mean (200*99+580)/100 = 203.8 W.
	// p50 = 200 W; p99: 99% of 100 s = 99 s are at or below 200 W, so 200 W;
	// peak 580 W; above 0.95 x 600 = 570 W: 1 s.
	want := power.DomainSummary{Name: "rack-1", Level: "rack", Limit: 600, Nodes: 2,
		Mean: 203.8, P50: 200, P99: 200, Peak: 580, Above: 1, Seconds: 100}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b hw.Watts) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("rack-1 summary (-want +got):\n%s", diff)
	}
	row := s.Summary(0.95)[0]
	// row-a: 400 W for 99 s, 780 W for 1 s: p99 400 W, peak 780 W, never above 950 W.
	if row.Peak != 780 || row.P99 != 400 || row.Above != 0 {
		t.Errorf("row-a: want peak 780, p99 400, above 0; got %+v", row)
	}
}

// TestDomainStatsHourlyHandComputed checks the per-domain hourly mean and
// max on two racks under a row, with changes inside and across hours.
func TestDomainStatsHourlyHandComputed(t *testing.T) {
	d, _, err := twoRacks().Bind(fourNodes, idle100)
	if err != nil {
		t.Fatal(err)
	}
	l := d.NewLoad()
	s := power.NewStats(l)
	for n := range 4 {
		l.Add(n, 100) // every node idle: racks 200 W, row 400 W
	}
	s.Observe(0)
	l.Add(0, 300) // n1 busy from 1,800 s: rack-1 500 W, row 700 W
	s.Observe(1800)
	l.Add(2, 50) // a change held for no time: rack-2 250 W at 5,400 s ...
	s.Observe(5400)
	l.Add(2, -50) // ... and back at once: it counts in no hour
	l.Add(0, -300)
	s.Observe(5400) // n1 idle again from 5,400 s (hour 1's middle)
	s.Observe(9000) // the run ends in hour 2's middle
	got := s.Hourly()
	want := [][]power.DomainHour{
		// row-a: hour 0: 400 W for 1,800 s, 700 W for 1,800 s: mean 550,
		// max 700; hour 1: 700 W for 1,800 s then 400 W for 1,800 s: 550,
		// 700; hour 2 (1,800 s covered): 400, 400.
		{{Mean: 550, Max: 700}, {Mean: 550, Max: 700}, {Mean: 400, Max: 400}},
		// rack-1: the same, 300 W lower.
		{{Mean: 350, Max: 500}, {Mean: 350, Max: 500}, {Mean: 200, Max: 200}},
		// rack-2: 200 W throughout; the 250 W held for no time is no max.
		{{Mean: 200, Max: 200}, {Mean: 200, Max: 200}, {Mean: 200, Max: 200}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hourly (-want +got):\n%s", diff)
	}
	// The hours' means, weighted by the time they cover, are the run's mean.
	for i, sum := range s.Summary(1) {
		var e float64
		for h, x := range got[i] {
			e += float64(x.Mean) * min(3600, 9000-float64(h)*3600)
		}
		if want := float64(sum.Mean) * sum.Seconds; e != want {
			t.Errorf("%s: hourly energy %v W s, summary's %v", sum.Name, e, want)
		}
	}
}
