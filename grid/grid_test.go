package grid

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/trace"
)

// Every embedded series covers 2023 hour by hour; NYISO's price mean is
// the README's 36.4 USD/MWh.
func TestEmbedded(t *testing.T) {
	for _, r := range Regions {
		for _, k := range []string{"price", "carbon"} {
			s, err := Embedded(r, k, "lca")
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Values) != 8760 || s.Start != time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC) {
				t.Errorf("%s %s: %d hours from %v", r, k, len(s.Values), s.Start)
			}
		}
	}
	p, _ := Embedded("US-NY-NYIS", "price", "")
	var m float64
	for _, v := range p.Values {
		m += v
	}
	if m /= float64(len(p.Values)); math.Abs(m-36.4) > 0.05 {
		t.Errorf("NYISO 2023 mean price %.2f USD/MWh, README says 36.4", m)
	}
	if _, err := Embedded("JP-TK", "price", ""); err == nil {
		t.Error("unknown region accepted")
	}
}

// Energy in each hour is priced at that hour's value: 1 MWh at 10 USD/MWh
// in hour 0 and 2 MWh at 20 USD/MWh in hour 1 cost 50 USD; a start two
// hours in shifts the hours; an hour past the series is an error.
func TestCost(t *testing.T) {
	in := "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00+00:00,10\n2023-01-01 01:00:00+00:00,20\n2023-01-01 02:00:00+00:00,-5\n2023-01-01 03:00:00+00:00,30\n"
	s, err := Read(strings.NewReader(in), "p.csv", PriceColumn, "USD/MWh", true)
	if err != nil {
		t.Fatal(err)
	}
	mwh := hw.Joules(3.6e9)
	hourly := []hw.Joules{mwh, 2 * mwh}
	if c, err := s.Apply(hourly, s.Start, USDPerJouleUSDPerMWh); err != nil || math.Abs(c-50) > 1e-9 {
		t.Errorf("cost %v, %v; want 50", c, err)
	}
	if c, _ := s.Apply(hourly, s.Start.Add(2*time.Hour), USDPerJouleUSDPerMWh); math.Abs(c-55) > 1e-9 {
		t.Errorf("from hour 2: %v, want -5 + 60 = 55", c)
	}
	if _, err := s.Apply(hourly, s.Start.Add(3*time.Hour), USDPerJouleUSDPerMWh); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("past the series: %v", err)
	}
	// Wrapped, hour 4 of the series is its hour 0 again: 30 + 2 x 10.
	if c, err := s.apply(hourly, s.Start.Add(3*time.Hour), USDPerJouleUSDPerMWh, true); err != nil || math.Abs(c-50) > 1e-9 {
		t.Errorf("wrapped from hour 3: %v, %v; want 30 + 20 = 50", c, err)
	}
	if _, err := s.apply(hourly, s.Start.Add(-time.Hour), USDPerJouleUSDPerMWh, true); err == nil {
		t.Error("wrapping accepted a start before the series")
	}
	a := &Account{Price: s, Carbon: s, Start: s.Start.Add(3 * time.Hour), Wrap: true}
	if !a.Wraps(2) || a.Wraps(1) {
		t.Errorf("Wraps(1), Wraps(2) from the last hour: %v, %v; want false, true", a.Wraps(1), a.Wraps(2))
	}
	// A year at 1 MW from any start of a one-year series: every hour once.
	ny, err := NewAccount(DefaultRegion, DefaultStart, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	jan, _, err := ny.Cost(YearAt(1e6))
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range ny.Price.Values {
		sum += v
	}
	if len(ny.Price.Values) != 8760 || math.Abs(jan-sum) > 1e-9*sum {
		t.Errorf("a year at 1 MW: %v USD, want the sum of the %d hourly prices %v", jan, len(ny.Price.Values), sum)
	}
	ny.Start, ny.Wrap = ny.Start.Add(3000*time.Hour), true
	if jun, _, err := ny.Cost(YearAt(1e6)); err != nil || math.Abs(jun-jan) > 1e-9*jan {
		t.Errorf("a wrapped year from hour 3000: %v, %v; want %v", jun, err, jan)
	}
}

// Missing hours up to MaxGapHours take the previous value; longer gaps,
// disorder, NaN and negative intensities are errors naming file, line and
// column.
func TestReadErrors(t *testing.T) {
	head := "Datetime (UTC),Price (USD/MWh)\n"
	s, err := Read(strings.NewReader(head+"2023-01-01 00:00:00,1\n2023-01-01 03:00:00,4\n"), "p.csv", PriceColumn, "", true)
	if err != nil || len(s.Values) != 4 || s.Values[2] != 1 || s.Filled != 2 {
		t.Fatalf("gap fill: %+v %v", s, err)
	}
	if _, err := Read(strings.NewReader(head+"2023-01-01 00:00:00,100000\n2023-01-01 01:00:00,-100000\n"), "p.csv", PriceColumn, "", true); err != nil {
		t.Errorf("prices at the bounds: %v", err)
	}
	for _, in := range []string{"1970-01-01 00:00:00,1\n", "2099-12-31 23:00:00,1\n"} {
		if _, err := Read(strings.NewReader(head+in), "p.csv", PriceColumn, "", true); err != nil {
			t.Errorf("an hour at the window's edge: %v", err)
		}
	}
	for _, c := range []struct{ in, col, want string }{
		{head + "2023-01-01 00:00:00,1\n2023-01-01 05:00:00,4\n", PriceColumn, "p.csv:3: column Datetime (UTC): 4 hours missing"},
		{head + "2023-01-01 01:00:00,1\n2023-01-01 00:00:00,4\n", PriceColumn, "p.csv:3: column Datetime (UTC)"},
		{head + "2023-01-01 00:30:00,1\n", PriceColumn, "not on the hour"},
		{head + "2023-01-01 00:00:00,NaN\n", PriceColumn, "p.csv:2: column Price (USD/MWh)"},
		{"Datetime (UTC),Carbon Intensity gCO₂eq/kWh (LCA)\n2023-01-01 00:00:00,-3\n", LCAColumn, "p.csv:2: column Carbon"},
		{"a,b\n", PriceColumn, "p.csv:1: header"},
		{head, PriceColumn, "p.csv:2: no rows"},
		// Beyond the physical range (issue 40: 1e308 priced a run at
		// +Inf with exit 0); 100,000 USD/MWh either way is still a price.
		{head + "2023-01-01 00:00:00,1e308\n", PriceColumn, "p.csv:2: column Price (USD/MWh): 1e308  is beyond the physical range (at most 100000"},
		{head + "2023-01-01 00:00:00,1\n2023-01-01 01:00:00,-100001\n", PriceColumn, "p.csv:3: column Price (USD/MWh): -100001"},
		{"Datetime (UTC),Carbon Intensity gCO₂eq/kWh (LCA)\n2023-01-01 00:00:00,5001\n", LCAColumn, "p.csv:2: column Carbon Intensity gCO₂eq/kWh (LCA): 5001"},
		// Hours outside 1970..2100 (issue 40): a series of year 1 or
		// 9999 alone used to be read.
		{head + "0001-01-01 00:00:00,1\n", PriceColumn, `p.csv:2: column Datetime (UTC): "0001-01-01 00:00:00" is outside 1970-01-01 00:00:00..2100-01-01 00:00:00`},
		{head + "1969-12-31 23:00:00,1\n", PriceColumn, `p.csv:2: column Datetime (UTC): "1969-12-31 23:00:00" is outside`},
		{head + "2099-12-31 23:00:00,1\n2100-01-01 00:00:00,1\n", PriceColumn, `p.csv:3: column Datetime (UTC): "2100-01-01 00:00:00" is outside`},
		{head + "9999-12-31 23:00:00,1\n", PriceColumn, `p.csv:2: column Datetime (UTC): "9999-12-31 23:00:00" is outside`},
	} {
		_, err := Read(strings.NewReader(c.in), "p.csv", c.col, "", c.col == PriceColumn)
		var pe *trace.ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestNewAccount(t *testing.T) {
	a, err := NewAccount(DefaultRegion, "2023-06-01 00:00:00", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	usd, kg, err := a.Cost([]hw.Joules{3.6e9}) // 1 MWh in the first hour of June
	if err != nil || usd <= -1000 || usd > 1000 || kg <= 0 || kg > 1000 {
		t.Errorf("1 MWh: %v USD, %v kg, %v", usd, kg, err)
	}
	if want := a.Price.Values[int(a.Start.Sub(a.Price.Start)/time.Hour)]; math.Abs(usd-want) > 1e-9 {
		t.Errorf("1 MWh costs %v USD, want the hour's price %v", usd, want)
	}
	for _, bad := range [][]string{{DefaultRegion, "2024-06-01 00:00:00", ""}, {DefaultRegion, "2023-06-01 00:10:00", ""}, {DefaultRegion, "", "scope3"}} {
		if _, err := NewAccount(bad[0], bad[1], "", "", bad[2]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add("Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,1\n2023-01-01 01:00:00,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Read(strings.NewReader(in), "f.csv", PriceColumn, "", true)
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %v", v)
			}
		}
		if len(s.Values) == 0 {
			t.Fatal("empty series without an error")
		}
	})
}
