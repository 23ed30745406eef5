package cedla

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/philly"
)

//go:embed data/price_US-NY-NYIS_2024-03.csv
var priceCSV []byte

//go:embed data/carbon_US-NY-NYIS_2021-06.csv
var carbonCSV []byte

// Series names and starts of the embedded price and carbon weeks.
const (
	PriceFile   = "price_US-NY-NYIS_2024-03.csv"
	CarbonFile  = "carbon_US-NY-NYIS_2021-06.csv"
	PriceStart  = "2024-03-14 04:00:00"
	CarbonStart = "2021-06-01 04:00:00"
)

// Grid returns the embedded price and carbon series.
func Grid() (price, carbon *grid.Series, err error) {
	if price, err = grid.Read(bytes.NewReader(priceCSV), PriceFile, grid.PriceColumn, "USD/MWh", true); err != nil {
		return nil, nil, err
	}
	if carbon, err = grid.Read(bytes.NewReader(carbonCSV), CarbonFile, grid.LCAColumn, "gCO2eq/kWh", false); err != nil {
		return nil, nil, err
	}
	return price, carbon, nil
}

// PerSlot holds each hourly value for the four slots of its hour.
func PerSlot(s *grid.Series, slots int) ([]float64, error) {
	if len(s.Values)*4 < slots {
		return nil, fmt.Errorf("%s: %d hours, want %d for %d slots", s.Name, len(s.Values), (slots+3)/4, slots)
	}
	out := make([]float64, slots)
	for h := range out {
		out[h] = s.Values[h/4]
	}
	return out, nil
}

// Workload is one scenario: jobs, inference load, latency bounds.
type Workload struct {
	Jobs  []policy.SlotJob
	Load  [][]float64
	Bound []float64
}

// MinJobSeconds is the shortest Philly job drawn: the paper's training
// jobs take "hours to days" (Sec. 2.2), so single-GPU Philly jobs of at
// least an hour (1,558 of the embedded days' 9,357, 83 of them a day or
// more); no upper cap beyond the week (a job whose deadline would fall
// after the run is drawn again).
const MinJobSeconds = 3600

// Generate draws a workload: n training jobs whose shortest completion
// times are single-GPU Philly job durations of at least MinJobSeconds (the
// paper: "the real job-trace", jobs of "hours to days") and whose arrivals are their submission times of day on a
// day of the week drawn uniformly; deadlines and latency bounds follow
// the paper's Gaussian (mean 50%, sd 7.5%) as slack over the shortest
// completion time / the slowest node's zero-load latency; inference
// requests/min (the total over the three models, split evenly) follow a
// diurnal profile. Every job is due within the run.
func Generate(d *Derived, m *policy.SlotModels, n int, reqPerMin float64, slots, extra int, seed uint64) (*Workload, error) {
	rng := rand.New(rand.NewPCG(seed, 0x70b5))
	var pool []trace.GPUJob
	for _, day := range philly.GridDays {
		js, err := philly.DayOf(day)
		if err != nil {
			return nil, err
		}
		for _, j := range js {
			if j.GPUs == 1 && j.DurationSec >= MinJobSeconds {
				pool = append(pool, j)
			}
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("cedla: no single-GPU Philly jobs")
	}
	w := &Workload{}
	nm := len(DNNs)
	for i := range nm {
		slowest := math.Inf(1)
		for t := range GPUs {
			slowest = math.Min(slowest, d.Mu[i][t])
		}
		g := math.Max(0.5+0.075*rng.NormFloat64(), 0.05)
		w.Bound = append(w.Bound, 2/slowest*(1+g))
	}
	for id := 0; len(w.Jobs) < n; {
		pj := pool[rng.IntN(len(pool))]
		model := rng.IntN(nm)
		fastest := 0.0
		for t := range GPUs {
			fastest = math.Max(fastest, m.Epochs[model][t])
		}
		dur := pj.DurationSec
		tmin := int(math.Ceil(dur / policy.SlotSeconds))
		g := math.Max(0.5+0.075*rng.NormFloat64(), 0.05)
		arr := rng.IntN(7)*96 + int(math.Mod(pj.SubmitSec, 86400)/policy.SlotSeconds)
		dl := arr + int(math.Ceil(float64(tmin)*(1+g))) - 1
		if dl >= slots {
			continue
		}
		w.Jobs = append(w.Jobs, policy.SlotJob{ID: id, Model: model, Arrival: arr, Deadline: dl, Epochs: dur / policy.SlotSeconds * fastest, Priority: rng.IntN(3)})
		id++
	}
	slices.SortStableFunc(w.Jobs, func(a, b policy.SlotJob) int { return a.Arrival - b.Arrival })
	for k := range w.Jobs {
		w.Jobs[k].ID = k
	}
	per := reqPerMin / 60 / float64(nm)
	for h := range slots + extra {
		hour := float64(h%96) / 4 // local time of day (slot 0 is midnight)
		f := 1 + 0.3*math.Sin(2*math.Pi*(hour-8)/24)
		row := make([]float64, nm)
		for i := range row {
			row[i] = per * f * math.Max(1+0.05*rng.NormFloat64(), 0.5)
		}
		w.Load = append(w.Load, row)
	}
	return w, nil
}

// startTime parses a series start.
func startTime(s string) time.Time {
	t, _ := time.Parse(time.DateTime, s)
	return t
}
