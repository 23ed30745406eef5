package cedla

import (
	"math"
	"time"

	"github.com/wattsched/wattsched/grid"
)

// PaperBands is the target share of hours in the price bands USD 0-20,
// 20-30 and 30+ per MWh (PriceBands) that picks the stand-in price week:
// the mean of the training shares of the two price-blind systems of the
// paper's Table 2 (EPRONS 0.31 / 0.63 / 0.09, PA-MBT 0.28 / 0.59 / 0.13),
// normalised to sum to 1. A system that ignores prices places its
// training across the week's hours regardless of price, so its shares are
// the nearest figure the paper gives to its week's price distribution
// (Fig. 2 is an image, not in the text).
var PaperBands = func() [3]float64 {
	b := [3]float64{(0.31 + 0.28) / 2, (0.63 + 0.59) / 2, (0.09 + 0.13) / 2}
	s := b[0] + b[1] + b[2]
	return [3]float64{b[0] / s, b[1] / s, b[2] / s}
}()

// WeekBands is the share of the hours of s from hour `from` (7 x 24
// hours) in the bands USD 0-20, 20-30 and 30+ per MWh.
func WeekBands(s *grid.Series, from int) [3]float64 {
	var b [3]float64
	for _, v := range s.Values[from : from+7*24] {
		switch {
		case v < 20:
			b[0]++
		case v < 30:
			b[1]++
		default:
			b[2]++
		}
	}
	for k := range b {
		b[k] /= 7 * 24
	}
	return b
}

// DayNight is the mean price of the week of s from hour `from` over the
// hours 10:00-18:00 of its days (hours 10-17 after `from`, which is a
// midnight) over the mean of its other hours: Fig. 2's "the electricity
// price is high during the daytime (10 a.m.-6 p.m.) while it is low
// during the night" is a ratio above 1.
func DayNight(s *grid.Series, from int) float64 {
	var day, night float64
	for k, v := range s.Values[from : from+7*24] {
		if h := k % 24; h >= 10 && h < 18 {
			day += v
		} else {
			night += v
		}
	}
	return (day / (7 * 8)) / (night / (7 * 16))
}

// ClosestWeek is the rule that chose the stand-in price week: of every
// week of s that starts at 04:00 UTC (midnight in New York in summer),
// has a day after it (the look-ahead past the last slot) and has Fig. 2's
// daily shape (DayNight above 1), the one whose band shares (WeekBands)
// are closest to target in the sum of absolute differences; ties: the
// earliest. It returns the first hour and the distance (-1 and +Inf when
// no week qualifies).
func ClosestWeek(s *grid.Series, target [3]float64) (int, float64) {
	best, dist := -1, math.Inf(1)
	for h := 0; h+8*24 <= len(s.Values); h++ {
		if s.Start.Add(time.Duration(h)*time.Hour).Hour() != 4 || DayNight(s, h) <= 1 {
			continue
		}
		b := WeekBands(s, h)
		d := math.Abs(b[0]-target[0]) + math.Abs(b[1]-target[1]) + math.Abs(b[2]-target[2])
		if d < dist-1e-12 {
			best, dist = h, d
		}
	}
	return best, dist
}
