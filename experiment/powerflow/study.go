package powerflow

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/philly"
)

// Study is `wattsched reproduce powerflow`.
type Study struct {
	quick, grid       bool
	seed              uint64
	nodes             int
	paiJobs, paiTasks string
	phillyFile, start string
	hours             float64
}

// Name implements experiment.Study.
func (*Study) Name() string { return "powerflow" }

// Synopsis implements experiment.Study.
func (*Study) Synopsis() string {
	return `-o DIR [--quick] [--grid] [--seed S] [--nodes N] [--pai-jobs F --pai-tasks F | --philly F [--start T]] [--hours H] [--force]
        reproduce the PowerFlow paper's evaluation (stand-in data, see the output)`
}

// Flags implements experiment.Study.
func (st *Study) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&st.quick, "quick", false, "fewer sweep points")
	fs.BoolVar(&st.grid, "grid", false, "also sweep every embedded Philly day (2017-10-13, -11-10, -11-13, -11-16, -12-08) at 12, 24 and 48 nodes (about 2 min on 2 cores)")
	fs.Uint64Var(&st.seed, "seed", 42, "seed for DNN/batch assignment, measurement noise and random traces")
	fs.IntVar(&st.nodes, "nodes", DefaultSetup().Nodes, "8-GPU nodes in the simulated cluster")
	fs.StringVar(&st.paiJobs, "pai-jobs", "", "Alibaba PAI 2020 job table (pai_job_table.csv) to use instead of the embedded Philly day")
	fs.StringVar(&st.paiTasks, "pai-tasks", "", "with --pai-jobs: the task table (pai_task_table.csv)")
	fs.StringVar(&st.phillyFile, "philly", "", "a Philly job table in the Pollux format (timestamp,duration,num_gpus,gpu_time,cluster; .gz allowed) to use instead of the embedded day")
	fs.StringVar(&st.start, "start", "", `with --philly: window start "YYYY-MM-DD HH:MM:SS" (default: the earliest job)`)
	fs.Float64Var(&st.hours, "hours", 24, "with --pai-jobs or --philly: keep jobs submitted in the first HOURS hours")
}

// Inputs implements experiment.Study: the Philly or PAI tables the flags
// name.
func (st *Study) Inputs() []scenario.Input {
	return experiment.FlagInputs("philly", st.phillyFile, "pai-jobs", st.paiJobs, "pai-tasks", st.paiTasks)
}

// Check implements experiment.Study.
func (st *Study) Check() error {
	switch {
	case st.nodes < 1 || st.nodes > 4096:
		return fmt.Errorf("reproduce powerflow: --nodes %d, want 1..4096 (as elastic scenarios)", st.nodes)
	case (st.paiJobs == "") != (st.paiTasks == ""):
		return errors.New("reproduce powerflow: --pai-jobs and --pai-tasks go together")
	case st.phillyFile != "" && st.paiJobs != "":
		return errors.New("reproduce powerflow: --philly and --pai-jobs are alternatives")
	case st.start != "" && st.phillyFile == "":
		return errors.New("reproduce powerflow: --start goes with --philly")
	case !(st.hours > 0 && st.hours <= 24*366):
		return fmt.Errorf("reproduce powerflow: --hours %v, want (0, 8784] (as elastic.hours)", st.hours)
	}
	return nil
}

// Run implements experiment.Study.
func (st *Study) Run(_ context.Context, env *experiment.Env) ([]*experiment.Results, error) {
	setup := DefaultSetup()
	setup.Nodes, setup.Seed = st.nodes, st.seed
	o := Options{Registries: env.Registries, Setup: setup, Quick: st.quick, Grid: st.grid, Workers: env.Workers, Progress: env.Progress, Shards: env.Shards}
	if st.paiJobs != "" {
		jobs, err := LoadPAIJobs(st.paiJobs, st.paiTasks, st.hours)
		if err != nil {
			return nil, err
		}
		o.Jobs, o.JobsSource = jobs, fmt.Sprintf("Alibaba PAI 2020 job and task tables (%d jobs of the first %g h)", len(jobs), st.hours)
	}
	if st.phillyFile != "" {
		jobs, err := LoadPhillyJobs(st.phillyFile, st.start, st.hours)
		if err != nil {
			return nil, err
		}
		from := st.start
		if from == "" {
			from = "its earliest job"
		}
		o.Jobs, o.JobsSource = jobs, fmt.Sprintf("Philly job table %s (%d jobs in the %g h from %s)", filepath.Base(st.phillyFile), len(jobs), st.hours, from)
	}
	// The Fig. 7 sweep: a run per case (PowerFlow's etas, the baselines'
	// frequencies, the Zeus pair; --quick's fewer) on every job of the
	// trace; the embedded Philly day when no table is given.
	jobs, source := len(o.Jobs), o.JobsSource
	if o.Jobs == nil {
		day, err := philly.Day()
		if err != nil {
			return nil, err
		}
		jobs, source = len(day), fmt.Sprintf("the embedded Philly day (%d jobs)", len(day))
	}
	if err := experiment.EstimateStudy("reproduce powerflow", source, experiment.ElasticFigures, jobs, len(pfCases(sweep(o.Quick))), env.Workers).Check(env.MaxMemory); err != nil {
		return nil, err
	}
	env.Notef("PowerFlow reproduction: fitting models, JCT-vs-energy sweeps of 6 systems, oracle comparison, sensitivity on 100-job traces")
	rep, err := Reproduce(env.Version, o)
	if err != nil {
		return nil, err
	}
	env.NoteLines(rep.Skipped)
	return experiment.One(Results(rep))
}

var _ experiment.Study = (*Study)(nil)
