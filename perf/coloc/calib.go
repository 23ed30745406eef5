// Package coloc models co-located (space-shared) DL training jobs as the
// EaCO paper describes them: the paper's own measurements (Tables 1-2 and
// the numbers its text gives for sets of 2-4 jobs) as a calibration table,
// node power by its eq. 5 fitted to that table, and the interference of
// co-tenants from Gavel's measured V100 pairs, with the rule used for sets
// no one measured and a fitted estimator for unmeasured pairs, checked
// against blox-pal's pair measurements (bloxpal.go), data it was not
// built on.
package coloc

import (
	"bytes"
	_ "embed"
	"fmt"

	"go.yaml.in/yaml/v3"
)

//go:embed data/eaco.yaml
var calibYAML []byte

// PaperModel is one model's measurement on a dedicated 8-V100 node.
type PaperModel struct {
	Name       string  `yaml:"name"`
	AvgPowerW  float64 `yaml:"avg_power_w"`
	EnergyKWh  float64 `yaml:"energy_kwh"`
	JCTHours   float64 `yaml:"jct_h"`
	EpochHours float64 `yaml:"epoch_h"`
	MemAvgPct  float64 `yaml:"mem_avg_pct"`
	MemMaxPct  float64 `yaml:"mem_max_pct"`
	GPUAvgPct  float64 `yaml:"gpu_avg_pct"`
	GPUMaxPct  float64 `yaml:"gpu_max_pct"`
	Source     string  `yaml:"source"`
}

// SetFigures are the numbers the paper's text gives for 2-4 co-located jobs.
type SetFigures struct {
	CPUUtilByJobs         []float64 `yaml:"cpu_util_pct_by_jobs"`
	GPUUtilByJobs         []float64 `yaml:"gpu_util_pct_by_jobs"`
	EnergySavingMinPct    float64   `yaml:"energy_saving_min_pct"`
	EnergySavingMaxPct    float64   `yaml:"energy_saving_max_pct"`
	EnergySaving4Pct      float64   `yaml:"energy_saving_4_jobs_pct"`
	JCTIncreaseMinPct     float64   `yaml:"jct_increase_min_pct"`
	JCTIncreaseMaxPct     float64   `yaml:"jct_increase_max_pct"`
	JCTIncrease23MaxPct   float64   `yaml:"jct_increase_2_3_jobs_max_pct"`
	JCTIncrease4Pct       float64   `yaml:"jct_increase_4_jobs_pct"`
	CoreAboveAggregatePct float64   `yaml:"core_util_above_aggregate_max_pct"`
}

// Calibration is the paper's measurement table.
type Calibration struct {
	Models []PaperModel `yaml:"models"`
	Sets   SetFigures   `yaml:"sets"`
}

// Model returns the named model's row.
func (c *Calibration) Model(name string) (PaperModel, bool) {
	for _, m := range c.Models {
		if m.Name == name {
			return m, true
		}
	}
	return PaperModel{}, false
}

// PaperCalibration is the embedded table (data/eaco.yaml).
func PaperCalibration() (*Calibration, error) {
	var c Calibration
	dec := yaml.NewDecoder(bytes.NewReader(calibYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("coloc: data/eaco.yaml: %w", err)
	}
	if len(c.Models) != 4 || len(c.Sets.CPUUtilByJobs) != 4 {
		return nil, fmt.Errorf("coloc: data/eaco.yaml: want 4 models and 4 set sizes")
	}
	return &c, nil
}
