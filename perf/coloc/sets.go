package coloc

import (
	"math"
	"strings"

	"github.com/wattsched/wattsched/trace/gavel"
)

// SetRow is one set of the paper's models run together on one node, as
// the models here predict it, beside what the paper states for its size.
type SetRow struct {
	Jobs []string `json:"jobs"`
	// JCTIncreasePct is the mean predicted JCT increase over running each
	// job alone (mean of 1/factor - 1), in percent.
	JCTIncreasePct float64 `json:"jct_increase_pct"`
	// EnergySavingPct is 1 - E(shared node) / sum of Table 1 energies.
	EnergySavingPct float64 `json:"energy_saving_pct"`
	// GPUUtilPct is the node's summed mean GPU utilisation (capped at 100).
	GPUUtilPct float64 `json:"gpu_util_pct"`
	// PaperJCTPct is the paper's figure for this set size (2-3 jobs: the
	// upper end 7.8%; 4 jobs: 19%); PaperEnergyPct likewise (the 30-44%
	// range's upper end for 2-3, 42% for 4).
	PaperJCTPct    float64 `json:"paper_jct_increase_pct"`
	PaperEnergyPct float64 `json:"paper_energy_saving_pct"`
}

// PaperSets predicts every set of 2-4 of the paper's models on one 8-GPU
// node: factors by model (each paper model keyed by key: PaperKey for the
// paper's own calibration, GavelKey for Gavel's pairs), node power by p
// at the summed utilisation.
func PaperSets(c *Calibration, p Power, model SetFunc, key func(name string) gavel.Key) []SetRow {
	var rows []SetRow
	n := len(c.Models)
	for mask := 1; mask < 1<<n; mask++ {
		var ms []PaperModel
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				ms = append(ms, c.Models[i])
			}
		}
		if len(ms) < 2 {
			continue
		}
		keys := make([]gavel.Key, len(ms))
		for i, m := range ms {
			keys[i] = key(m.Name)
		}
		f, ok := model(keys)
		if !ok {
			continue
		}
		var r SetRow
		var excl, longest, util float64
		for i, m := range ms {
			r.Jobs = append(r.Jobs, m.Name)
			r.JCTIncreasePct += 100 * (1/f[i] - 1) / float64(len(ms))
			excl += m.EnergyKWh
			longest = math.Max(longest, m.JCTHours/f[i])
			util += m.GPUAvgPct
		}
		r.GPUUtilPct = math.Min(util, 100)
		u := make([]float64, p.GPUsPerNode)
		for i := range u {
			u[i] = r.GPUUtilPct
		}
		w := p.Node(p.CPUPerJobPct*float64(len(ms)), u)
		r.EnergySavingPct = 100 * (1 - float64(w)*longest/1000/excl)
		if len(ms) == 4 {
			r.PaperJCTPct, r.PaperEnergyPct = c.Sets.JCTIncrease4Pct, c.Sets.EnergySaving4Pct
		} else {
			r.PaperJCTPct, r.PaperEnergyPct = c.Sets.JCTIncrease23MaxPct, c.Sets.EnergySavingMaxPct
		}
		rows = append(rows, r)
	}
	return rows
}

// PaperKey keys a paper model as itself on a whole 8-GPU node (Sec. 6.1:
// each job trained on eight V100), for PaperInterference.
func PaperKey(name string) gavel.Key { return gavel.Key{Type: name, Scale: 8} }

// GavelKey keys a paper model by the Gavel type that plays it
// (PaperGavelType).
func GavelKey(name string) gavel.Key { return PaperGavelType[name] }

// Name joins the set's job names.
func (r SetRow) Name() string { return strings.Join(r.Jobs, "+") }
