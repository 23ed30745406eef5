package experiment

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace/gpuvar"
	"github.com/wattsched/wattsched/trace/swf"
)

// VAHRMStandIns says what stands in for the VAHRM paper's private inputs
// in every HPC run: the job log (unless it is the user's), the device power
// and the power models.
func VAHRMStandIns(log *VAHRMLog) []string {
	return []string{
		"Job log: " + log.Source + fmt.Sprintf("; the first %d jobs with run time and processors, nodes = processors / %d rounded up (largest job: %d of 540 nodes)", len(log.Jobs), log.ProcsPerNode, log.MaxNodes()),
		"GPU power: " + gpuvar.Source + ": the measured V100s keep their measured mean power per application as the first GPUs of the 2,160; the rest is drawn from each application's measured mean and deviation (paper: 256 measured TSUBAME3.0 P100s, rest drawn likewise)",
		"GPU job types: PageRank (small), ResNet (medium), SGEMM (large) stand in for the paper's three CUDA kernels",
		fmt.Sprintf("CPU power: no per-CPU measurements are public; each CPU draws Table IV's typical value (per node / 2) times 1 + N(0, %.0f%%)", 100*vahrmCPUCV),
		"Power-model inputs: per-application mean SM clock, memory clock and temperature stand in for PMC profiles; VAHRM+TSMVA's predictions carry TSMVA (RF+RF)'s held-out relative errors",
	}
}

// HPCScenarioResult is a run of an hpc scenario.
type HPCScenarioResult struct {
	Version  string    `json:"version"`
	Scenario *Scenario `json:"scenario"`
	StandIns []string  `json:"stand_ins"`
	Jobs     int       `json:"jobs"`
	// OfferedLoad is node-seconds asked for / (nodes x submission span) at the scenario's SR.
	OfferedLoad Num      `json:"offered_load"`
	Seeds       []uint64 `json:"seeds"`
	// Runs holds every (seed, workload, system) relative to the first
	// system on the same seed and workload; Averages the means per system.
	Runs     []Relative `json:"runs"`
	Averages []Relative `json:"averages"`
}

// LoadHPCLog reads the scenario's SWF log.
func LoadHPCLog(h *HPCSpec) (*VAHRMLog, error) {
	if h.SWF == "nasa-ipsc" {
		l, err := swf.NASAiPSC()
		if err != nil {
			return nil, err
		}
		return VAHRMLogFrom(l, NASASource, h.Jobs, h.ProcsPerNode)
	}
	l, err := swf.ReadFile(h.SWF)
	if err != nil {
		return nil, err
	}
	return VAHRMLogFrom(l, "SWF log "+filepath.Base(h.SWF), h.Jobs, h.ProcsPerNode)
}

// RunHPCScenario replays the scenario's log (from LoadHPCLog) for each
// seed, workload and system on the VAHRM paper's system.
func RunHPCScenario(s *Scenario, log *VAHRMLog, version string, workers int, progress func(done, total int, what string)) (*HPCScenarioResult, error) {
	h := s.HPC
	res := &HPCScenarioResult{Version: version, Scenario: s, StandIns: VAHRMStandIns(log), Jobs: len(log.Jobs), OfferedLoad: Num(log.Utilization(h.SR))}
	var ws []VAHRMWorkload
	for _, id := range h.Workloads {
		ws = append(ws, VAHRMWorkloads()[id])
	}
	for k := 0; k < s.Seeds; k++ {
		seed := s.FirstSeed + uint64(k)
		res.Seeds = append(res.Seeds, seed)
		env, _, _, err := BuildVAHRMEnv(log, seed)
		if err != nil {
			return nil, err
		}
		env.Workloads = ws
		set := VAHRMSetting{SR: h.SR, PCR: h.PCR, Beta: *h.Beta, FirstRunRatio: h.FirstRunRatio, Seed: seed}
		// The first system is the baseline; it is listed again so that its
		// own row (ratios 1) appears with its absolute figures.
		rel, err := env.Sweep([]string{"seed=" + strconv.FormatUint(seed, 10)}, []VAHRMSetting{set}, h.Systems, h.Systems[0], workers, progress)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, rel...)
	}
	all := make([]Relative, len(res.Runs))
	for i, r := range res.Runs {
		all[i] = r
		all[i].Setting = "all"
	}
	res.Averages = Averages(all)
	return res, nil
}

// HPCScenarioTable is the printed summary: per system, means over seeds and
// workloads relative to the first system.
func HPCScenarioTable(r *HPCScenarioResult) report.Table {
	h := r.Scenario.HPC
	t := report.Table{Title: fmt.Sprintf("%s: %d jobs, SR=%g (offered load %.1f%%), PCR=%g, beta=%.4g, first-run ratio %g; relative to %s, mean of %d workloads x %d seeds",
		r.Scenario.Name, r.Jobs, h.SR, 100*float64(r.OfferedLoad), h.PCR, *h.Beta, h.FirstRunRatio, h.Systems[0], len(h.Workloads), len(r.Seeds)),
		Head: []string{"system", "energy saving", "above idle", "energy MWh", "turnaround", "throughput", "waiting", "mean wait h", "longest wait h", "max s above cap", "max excess W"}}
	for _, a := range r.Averages {
		t.Rows = append(t.Rows, []string{a.System, fmt.Sprintf("%.2f%%", 100*a.EnergySave), fmt.Sprintf("%.2f%%", 100*a.AboveIdleSave), fmt.Sprintf("%.3f", a.EnergyJ/3.6e9), fmt.Sprintf("%.3f", a.TATRatio),
			fmt.Sprintf("%.3f", a.ThroughRat), fmt.Sprintf("%.3f", a.WaitRatio), fmt.Sprintf("%.2f", a.MeanWaitS/3600), fmt.Sprintf("%.1f", a.MaxWaitS/3600),
			fmt.Sprintf("%.0f", a.ExcessS), fmt.Sprintf("%.0f", a.MaxExcessW)})
	}
	return t
}

// WriteHPCScenario writes summary.json, runs.csv, energy_by_workload.svg
// and report.html into a prepared directory.
func WriteHPCScenario(dir string, r *HPCScenarioResult) error {
	js, err := report.JSON(r)
	if err != nil {
		return err
	}
	byW := make([]Relative, len(r.Runs))
	var xs []float64
	for i, x := range r.Runs {
		byW[i] = x
		byW[i].Setting = "w" + strconv.Itoa(x.Workload)
	}
	for _, id := range r.Scenario.HPC.Workloads {
		xs = append(xs, float64(id))
	}
	lp := sweepPlot("Energy saving by workload", "energy saving vs "+r.Scenario.HPC.Systems[0]+" (%)", byW, xs, func(x Relative) float64 { return 100 * x.EnergySave }, false)
	lp.XLabel = "workload (Table III: 0-2 mostly CPU, 3-5 mixed, 6-8 mostly GPU jobs)"
	svg, err := lp.SVG()
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	html, err := report.Page{Title: "wattsched: " + r.Scenario.Name, Notes: append([]string{r.Scenario.Description}, r.StandIns...),
		Tables: []report.Table{HPCScenarioTable(r)}, Figures: []report.Figure{{Caption: "Energy saving by workload (mean over seeds)", SVG: svg}},
		Footnote: "wattsched " + r.Version}.HTML()
	if err != nil {
		return err
	}
	return report.WriteFiles(dir, map[string][]byte{"summary.json": js, "runs.csv": relCSV(r.Runs), "energy_by_workload.svg": svg, "report.html": html})
}
