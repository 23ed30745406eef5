package cedla

import (
	"math"
	"testing"
	"time"

	"github.com/wattsched/wattsched/grid"
)

// TestEmbeddedWeekBands: the embedded price week (NYISO CAPITL, 14-21
// March 2024) has 48 / 100 / 20 of its 168 hours in the bands USD 0-20 /
// 20-30 / 30+, L1 distance 0.021 from PaperBands (0.291 / 0.601 / 0.108),
// and prices higher from 10:00 to 18:00 than in the other hours (Fig. 2).
func TestEmbeddedWeekBands(t *testing.T) {
	ps, _, err := Grid()
	if err != nil {
		t.Fatal(err)
	}
	got := WeekBands(ps, 0)
	want := [3]float64{48.0 / 168, 100.0 / 168, 20.0 / 168}
	for k := range got {
		if math.Abs(got[k]-want[k]) > 1e-12 {
			t.Fatalf("bands %v, want %v", got, want)
		}
	}
	if h, d := ClosestWeek(ps, PaperBands); h != 0 || math.Abs(d-0.0213) > 5e-4 {
		t.Errorf("ClosestWeek = hour %d, distance %.4f; want 0, 0.0213", h, d)
	}
	if r := DayNight(ps, 0); !(r > 1) {
		t.Errorf("day/night price ratio %.3f, want > 1", r)
	}
}

// TestClosestWeek: a week of the right bands without Fig. 2's daily
// shape is never chosen. Eight days at 25 USD/MWh (bands 0/1/0, distance
// 2 x 0.399 = 0.80 from PaperBands) have no day/night difference: no week.
// Eight days with 40 from 10:00 to 18:00 and 25 at night (bands 0 / 2/3 /
// 1/3, ratio 1.6): its only week (hour 0), distance 0.291 + 0.066 + 0.225
// = 0.582.
func TestClosestWeek(t *testing.T) {
	start := time.Date(2024, 1, 1, 4, 0, 0, 0, time.UTC)
	days := func(f func(h int) float64) *grid.Series {
		s := &grid.Series{Name: "t", Start: start}
		for k := range 8 * 24 {
			s.Values = append(s.Values, f(k%24))
		}
		return s
	}
	if h, _ := ClosestWeek(days(func(int) float64 { return 25 }), PaperBands); h != -1 {
		t.Errorf("flat week: ClosestWeek = hour %d, want -1", h)
	}
	shaped := days(func(h int) float64 {
		if h >= 10 && h < 18 {
			return 40
		}
		return 25
	})
	h, d := ClosestWeek(shaped, PaperBands)
	want := PaperBands[0] + math.Abs(PaperBands[1]-2.0/3) + math.Abs(PaperBands[2]-1.0/3)
	if h != 0 || math.Abs(d-want) > 1e-9 {
		t.Errorf("shaped week: ClosestWeek = hour %d, distance %.4f; want 0, %.4f", h, d, want)
	}
}
