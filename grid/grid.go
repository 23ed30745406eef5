// Package grid turns energy into money and carbon: hourly electricity
// prices (USD/MWh) and grid carbon intensities (gCO2eq/kWh) for a region,
// applied to a run's energy in each hour of simulated time.
//
// Embedded: the 2023 hourly series of five regions (US-NY-NYIS,
// US-CAL-CISO, US-TEX-ERCO, US-MIDA-PJM, DE-LU) from the Green-DCC
// repository's standardised files: prices from the ISOs' public day-ahead
// or real-time markets, carbon intensities from Electricity Maps (ODbL).
// data/README.md gives sources and terms. Users bring other series in the
// same CSV format.
package grid

import (
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

//go:embed data/*.csv.gz
var data embed.FS

// Regions are the embedded regions (2023).
var Regions = []string{"US-NY-NYIS", "US-CAL-CISO", "US-TEX-ERCO", "US-MIDA-PJM", "DE-LU"}

// Column names of the CSV format (Green-DCC's standardised files).
const (
	TimeColumn   = "Datetime (UTC)"
	PriceColumn  = "Price (USD/MWh)"
	DirectColumn = "Carbon Intensity gCO₂eq/kWh (direct)"
	LCAColumn    = "Carbon Intensity gCO₂eq/kWh (LCA)"
)

// MaxGapHours is the longest run of missing hours a series may have; each
// missing hour takes the previous hour's value.
const MaxGapHours = 3

// Series is one hourly signal: Values[i] holds from Start + i hours.
type Series struct {
	Name   string
	Unit   string
	Start  time.Time
	Values []float64
	// Filled counts the missing hours that took the previous value.
	Filled int
}

// End is the first hour after the series.
func (s *Series) End() time.Time { return s.Start.Add(time.Duration(len(s.Values)) * time.Hour) }

// The physical range of the values a series may hold, beyond which a value
// is an input error (a price of 1e308 USD/MWh priced a run at +Inf):
// MaxAbsPrice bounds prices either way, some five times the highest
// wholesale price cap in force (Australia's NEM, about 20,000 AUD/MWh;
// ERCOT's 5,000 USD/MWh; the EU's +-4,000 and -500 EUR/MWh); MaxCarbon
// bounds carbon intensities, some three times the most carbon-intensive
// generation (lignite, about 1,100-1,700 gCO2eq/kWh over its life cycle).
const (
	MaxAbsPrice = 100_000 // USD/MWh
	MaxCarbon   = 5_000   // gCO2eq/kWh
)

// Read parses a CSV with a "Datetime (UTC)" column (YYYY-MM-DD hh:mm:ss,
// optionally with a +00:00 offset) and the named value column, one row per
// hour in order. Prices may be negative; carbon intensities may not (neg
// is false). Errors name file, line and column.
func Read(r io.Reader, file, column, unit string, neg bool) (*Series, error) {
	cr, head, err := trace.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	bad := cr.Bad
	ti, vi := slices.Index(head, TimeColumn), slices.Index(head, column)
	if ti < 0 || vi < 0 {
		return nil, bad(1, "", fmt.Errorf("header %q lacks %q or %q", strings.Join(head, ","), TimeColumn, column))
	}
	s := &Series{Name: file, Unit: unit}
	var prev time.Time
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad(line, "", err)
		}
		if len(rec) != len(head) {
			return nil, bad(line, "", fmt.Errorf("%d fields, want %d", len(rec), len(head)))
		}
		t, err := parseHour(rec[ti])
		if err != nil {
			return nil, bad(line, TimeColumn, err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[vi]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !neg && v < 0 {
			return nil, bad(line, column, fmt.Errorf("%q is not a finite %s", rec[vi], map[bool]string{true: "number", false: "number >= 0"}[neg]))
		}
		if lim := map[bool]float64{true: MaxAbsPrice, false: MaxCarbon}[neg]; math.Abs(v) > lim {
			return nil, bad(line, column, fmt.Errorf("%s %s is beyond the physical range (at most %g %s%s)", rec[vi], unit, lim, unit, map[bool]string{true: " either way", false: ""}[neg]))
		}
		if len(s.Values) == 0 {
			s.Start = t
		} else {
			gap := int(t.Sub(prev) / time.Hour)
			switch {
			case t.Sub(prev)%time.Hour != 0 || gap < 1:
				return nil, bad(line, TimeColumn, fmt.Errorf("%s does not follow %s by whole hours", t.Format(time.DateTime), prev.Format(time.DateTime)))
			case gap-1 > MaxGapHours:
				return nil, bad(line, TimeColumn, fmt.Errorf("%d hours missing before %s (at most %d are filled)", gap-1, t.Format(time.DateTime), MaxGapHours))
			}
			for k := 1; k < gap; k++ {
				s.Values = append(s.Values, s.Values[len(s.Values)-1])
				s.Filled++
			}
		}
		s.Values = append(s.Values, v)
		prev = t
	}
	if len(s.Values) == 0 {
		return nil, bad(2, "", errors.New("no rows"))
	}
	return s, nil
}

// TimeMin and TimeMax bound the hours of a series and a start: from the
// Unix epoch to before 2100 (the window of every dated input: Philly
// tables, Kubernetes dumps, Prometheus answers). A year-1 or year-9999 row
// would otherwise stretch a series over millennia of filled gaps or make
// its hours wrap.
var (
	TimeMin = time.Unix(0, 0).UTC()
	TimeMax = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

func parseHour(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{"2006-01-02 15:04:05-07:00", time.DateTime} {
		if t, err := time.Parse(layout, v); err == nil {
			t = t.UTC()
			if t.Minute() != 0 || t.Second() != 0 {
				return time.Time{}, fmt.Errorf("%q is not on the hour", v)
			}
			if t.Before(TimeMin) || !t.Before(TimeMax) {
				return time.Time{}, fmt.Errorf("%q is outside 1970-01-01 00:00:00..2100-01-01 00:00:00 (UTC; exclusive end)", v)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not YYYY-MM-DD hh:mm:ss (UTC)", v)
}

// ReadFile reads a series file (gzip-compressed or not, whatever its
// name), within the bounds of a table (userfile.Table).
func ReadFile(path, column, unit string, neg bool) (*Series, error) {
	f, err := userfile.Open(path, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, column, unit, neg)
}

func readBytes(b []byte, name string, gz bool, column, unit string, neg bool) (*Series, error) {
	var r io.Reader = bytes.NewReader(b)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, &trace.ParseError{File: name, Line: 1, Err: fmt.Errorf("gzip: %w", err)}
		}
		r = zr
	}
	return Read(r, name, column, unit, neg)
}

// Embedded returns an embedded region's 2023 price or carbon series
// (kind "price", or "carbon" with basis "lca" or "direct").
func Embedded(region, kind, basis string) (*Series, error) {
	if !slices.Contains(Regions, region) {
		return nil, fmt.Errorf("grid: no embedded series for region %q (embedded: %s; or give price and carbon files)", region, strings.Join(Regions, ", "))
	}
	name := kind + "_" + region + "_2023.csv"
	b, err := data.ReadFile("data/" + name + ".gz")
	if err != nil {
		return nil, fmt.Errorf("grid: no embedded %s series for %s", kind, region)
	}
	switch kind {
	case "price":
		return readBytes(b, name, true, PriceColumn, "USD/MWh", true)
	case "carbon":
		col := LCAColumn
		if basis == "direct" {
			col = DirectColumn
		}
		return readBytes(b, name, true, col, "gCO2eq/kWh", false)
	}
	return nil, fmt.Errorf("grid: kind %q, want price or carbon", kind)
}

// Apply sums value x energy over the hours of a run whose simulated time 0
// is start: hourly[h] is the energy of [start + h, start + h + 1 hour),
// priced at the series' value for that hour. scale converts joules times
// the series' unit into the result's unit. An hour outside the series is
// an error.
func (s *Series) Apply(hourly []hw.Joules, start time.Time, scale float64) (float64, error) {
	return s.apply(hourly, start, scale, false)
}

// apply is Apply; with wrap, an hour past the series' end takes the value
// of the same hour counted from the series' start (the series repeated).
func (s *Series) apply(hourly []hw.Joules, start time.Time, scale float64, wrap bool) (float64, error) {
	off := start.Sub(s.Start)
	if off%time.Hour != 0 {
		return 0, fmt.Errorf("grid: start %s is not on an hour of %s", start.Format(time.DateTime), s.Name)
	}
	first := int(off / time.Hour)
	var sum float64
	for h, j := range hourly {
		if j == 0 {
			continue
		}
		i := first + h
		if wrap && i >= len(s.Values) && first >= 0 {
			i %= len(s.Values)
		}
		if i < 0 || i >= len(s.Values) {
			return 0, fmt.Errorf("grid: hour %d of the run (%s UTC) is outside %s (%s to %s)", h, start.Add(time.Duration(h)*time.Hour).Format(time.DateTime),
				s.Name, s.Start.Format(time.DateTime), s.End().Format(time.DateTime))
		}
		sum += float64(j) * s.Values[i]
	}
	return sum * scale, nil
}

// Joules to the result units: USD/MWh x J -> USD; gCO2/kWh x J -> kgCO2.
const (
	USDPerJouleUSDPerMWh  = 1 / 3.6e9
	KgPerJouleGramsPerKWh = 1 / 3.6e6 / 1000
)

// Account prices runs: a price and a carbon series and the wall-clock hour
// (UTC) that simulated time 0 stands for.
type Account struct {
	Price, Carbon *Series
	Start         time.Time
	// PUE scales the IT energy the engines report to the facility's
	// (cooling, power conversion): 1 (none) unless set.
	PUE float64
	// Wrap prices an hour past a series' end at the value of the same hour
	// counted from the series' start (the series repeated), instead of
	// refusing it.
	Wrap bool
	// Where says which series and start, for the results; Sources says
	// which series only.
	Where, Sources string
}

// DefaultRegion and DefaultStart are used when a scenario names no grid.
const (
	DefaultRegion = "US-NY-NYIS"
	DefaultStart  = "2023-01-01 00:00:00"
)

// NewAccount builds an account from a region's embedded series, or from
// price and carbon files (either replaces the region's), starting at start
// ("YYYY-MM-DD hh:mm:ss" UTC, on the hour; empty: the price series' first
// hour). basis is "lca" (life-cycle, the default) or "direct".
func NewAccount(region, start, priceFile, carbonFile, basis string) (*Account, error) {
	if basis == "" {
		basis = "lca"
	}
	if basis != "lca" && basis != "direct" {
		return nil, fmt.Errorf("grid: carbon basis %q, want lca or direct", basis)
	}
	col := LCAColumn
	if basis == "direct" {
		col = DirectColumn
	}
	a := &Account{}
	var err error
	var from []string
	if priceFile != "" {
		a.Price, err = ReadFile(priceFile, PriceColumn, "USD/MWh", true)
		from = append(from, "prices from "+priceFile)
	} else {
		a.Price, err = Embedded(region, "price", "")
		from = append(from, "prices: "+region+" 2023 hourly wholesale (embedded, grid/data/README.md)")
	}
	if err != nil {
		return nil, err
	}
	if carbonFile != "" {
		a.Carbon, err = ReadFile(carbonFile, col, "gCO2eq/kWh", false)
		from = append(from, "carbon intensity ("+basis+") from "+carbonFile)
	} else {
		a.Carbon, err = Embedded(region, "carbon", basis)
		from = append(from, "carbon intensity ("+basis+"): "+region+" 2023 hourly, Electricity Maps via Green-DCC (ODbL)")
	}
	if err != nil {
		return nil, err
	}
	a.Start = a.Price.Start
	if start != "" {
		if a.Start, err = parseHour(start); err != nil {
			return nil, fmt.Errorf("grid: start: %w", err)
		}
	}
	for _, s := range []*Series{a.Price, a.Carbon} {
		if a.Start.Before(s.Start) || !a.Start.Before(s.End()) {
			return nil, fmt.Errorf("grid: start %s UTC is outside %s (%s to %s)", a.Start.Format(time.DateTime), s.Name, s.Start.Format(time.DateTime), s.End().Format(time.DateTime))
		}
	}
	a.Sources = strings.Join(from, "; ")
	a.Where = a.Sources + "; simulated time 0 is " + a.Start.Format("2006-01-02 15:04") + " UTC"
	return a, nil
}

// YearAt is the hourly energy of a constant power w over a year (8,760
// hours), for pricing a load level that has no time of its own.
func YearAt(w hw.Watts) []hw.Joules {
	out := make([]hw.Joules, 8760)
	for h := range out {
		out[h] = hw.Joules(float64(w) * 3600)
	}
	return out
}

// Cost is the money (USD) and carbon (kg CO2eq) of a run's hourly IT
// energy, times the PUE.
func (a *Account) Cost(hourly []hw.Joules) (usd, kgCO2 float64, err error) {
	pue := a.PUE
	if pue == 0 {
		pue = 1
	}
	if usd, err = a.Price.apply(hourly, a.Start, USDPerJouleUSDPerMWh*pue, a.Wrap); err != nil {
		return 0, 0, err
	}
	kgCO2, err = a.Carbon.apply(hourly, a.Start, KgPerJouleGramsPerKWh*pue, a.Wrap)
	return usd, kgCO2, err
}

// StudyAccount is the account of the reproductions: the default region
// from the default start, repeated past its end so that a study's long
// runs are priced too (Where says so).
func StudyAccount() (*Account, error) {
	a, err := NewAccount(DefaultRegion, DefaultStart, "", "", "")
	if err != nil {
		return nil, err
	}
	a.Wrap = true
	a.Where += "; a run past the end of the series takes its hours from the series' start again"
	return a, nil
}

// Wraps says whether n hours from the account's start run past the end of
// its price or carbon series. It counts hours, never a time.Duration of n
// hours, which wraps past 2,562,047 hours (a Gavel arrival of 9.9e9 s
// made the check pass and the run fail after it, issue 40).
func (a *Account) Wraps(n int) bool {
	for _, s := range []*Series{a.Price, a.Carbon} {
		if !s.End().After(a.Start) || int64(n) > int64(s.End().Sub(a.Start)/time.Hour) {
			return true
		}
	}
	return false
}
