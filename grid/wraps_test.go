package grid

import "testing"

// Wraps counts hours: 2,750,000 hours (a Gavel arrival of 9.9e9 s) is past
// a year's series, although time.Duration(n) * time.Hour wraps to a
// negative duration there (issue 40); the series' own length is not.
func TestWrapsHugeHours(t *testing.T) {
	a, err := NewAccount(DefaultRegion, DefaultStart, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	n := len(a.Price.Values) - int(a.Start.Sub(a.Price.Start).Hours())
	for _, c := range []struct {
		hours int
		want  bool
	}{{n, false}, {n + 1, true}, {2_750_000, true}, {1 << 40, true}} {
		if got := a.Wraps(c.hours); got != c.want {
			t.Errorf("Wraps(%d) = %v, want %v (series of %d hours from the start)", c.hours, got, c.want, n)
		}
	}
}
