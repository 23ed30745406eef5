package cedla

import (
	"fmt"

	"github.com/wattsched/wattsched/experiment"
	pcedla "github.com/wattsched/wattsched/policy/cedla"
)

// Memory figures of slotted runs (mode slotted and reproduce cedla),
// measured as the kit's (experiment/budget.go: peak resident set, 2 CPUs);
// docs/performance.md gives the commands and the table. The Go heap of a
// slotted run stays below 10 MB: what grows is HiGHS's memory while
// CE-DLA solves a plan, which follows the program's columns (ColumnBound)
// and, per column, the jobs it plans (a larger MILP search). The engine
// and the one-slot planners hold little: 4 x 4,096 nodes over 96 slots
// with FIFO, EPRONS and PA-MBT peaked at 33 MB.
const (
	// solverFixedBytes is HiGHS's own part once any CE-DLA run goes (its
	// threads and allocator arenas): one CE-DLA run of 20 jobs peaked at
	// 85 MiB, two at once at 104 MiB, so each run's program about 19
	// MiB and the rest about 32 MiB over the engine's 34 MiB.
	solverFixedBytes = 32 << 20
	// columnBytesPerJob and maxColumnBytes give the bytes of one column
	// of ColumnBound while a run plans: columnBytesPerJob times the jobs
	// it may plan, at most maxColumnBytes (6 x 4 nodes or 40 x 4 nodes,
	// 96 slots, lookahead 24, 20, 50 and 100 jobs: the program's part
	// about 4, 15 and 17 KiB a column of the bound).
	columnBytesPerJob = 256
	maxColumnBytes    = 20 << 10
	// slotKeptBytes and jobKeptBytes are what a finished run keeps of
	// each slot (its sample, timeline row, plan info) and each job (its
	// result and jobs.csv row) until the results are written.
	slotKeptBytes = 1 << 10
	jobKeptBytes  = 512
)

// ColumnBound is the most columns one CE-DLA program can have for jobs
// jobs over a window of periods periods (at most its lookahead slots; fewer
// with block_slots) on types node types and models DNN models: per job,
// type and period a placement and a restart column, per model, type and
// period the nodes, the load and the latency excess, per type and period
// the nodes on, and per job a rejection column (Problem 1): every job
// counted as waiting at once (the bound; a plan holds only the jobs that
// have arrived and are neither done nor rejected).
func ColumnBound(jobs, types, models, periods int) int64 {
	perPeriod := experiment.SatAdd(experiment.SatMul(2, int64(jobs)), int64(3*models+1))
	return experiment.SatAdd(experiment.SatMul(int64(types)*int64(periods), perPeriod), int64(jobs))
}

// SlottedLoad is what a slotted estimate reads: the runs of a slotted
// scenario or of the study.
type SlottedLoad struct {
	// Jobs is the most training jobs of one run; Nodes the nodes of all
	// types; Slots the horizon and Periods CE-DLA's periods per window
	// (its lookahead, or fewer with block_slots).
	Jobs, Nodes, Slots, Periods int
	// Planners is how many of Runs are CE-DLA runs (each builds a
	// program); Seeds the workloads held for the whole command.
	Planners, Runs, Seeds int
}

// EstimateSlotted estimates a slotted command (mode slotted, reproduce
// cedla): the process, HiGHS's fixed part when a CE-DLA run goes, each
// CE-DLA run going at once (min(workers, runs)) at its largest program,
// the kept part of every run and the workloads. what names the command
// and the key that gives the jobs ("slotted.jobs.count 100"), for the
// message.
func EstimateSlotted(l SlottedLoad, what string, workers int) experiment.Estimate {
	at := experiment.Concurrent(l.Runs, workers)
	planning := min(at, int64(l.Planners))
	cols := ColumnBound(l.Jobs, len(GPUs), len(DNNs), l.Periods)
	perCol := min(int64(maxColumnBytes), experiment.SatMul(columnBytesPerJob, int64(max(l.Jobs, 1))))
	program := experiment.SatMul(cols, perCol)
	var solver int64
	if planning > 0 {
		solver = experiment.SatAdd(solverFixedBytes, experiment.SatMul(planning, program))
	}
	kept := experiment.SatMul(int64(l.Runs), experiment.SatAdd(experiment.SatMul(int64(l.Slots), slotKeptBytes), experiment.SatMul(int64(l.Jobs), jobKeptBytes)))
	works := experiment.SatMul(int64(l.Seeds), experiment.SatAdd(experiment.SatMul(int64(l.Jobs), jobKeptBytes), experiment.SatMul(int64(l.Slots+l.Periods), int64(8*len(DNNs)))))
	e := experiment.Estimate{Bytes: experiment.SatAdd(experiment.BaseBytes, solver, kept, works)}
	if planning > 0 && program >= kept {
		e.What = fmt.Sprintf("CE-DLA would plan up to %s jobs over %d periods in each of %d runs going at once (up to %s columns a program)",
			experiment.Commas(int64(l.Jobs)), l.Periods, planning, experiment.Commas(cols))
		e.Cause = fmt.Sprintf("because of %s (every job counted as waiting at once)", what)
		e.Remedy = "use fewer jobs, a shorter lookahead or block_slots, or the one-slot planners"
		return e
	}
	e.What = fmt.Sprintf("%s slotted runs of %s slots would be kept", experiment.Commas(int64(l.Runs)), experiment.Commas(int64(l.Slots)))
	e.Cause = fmt.Sprintf("because of %s, the systems and the seeds", what)
	e.Remedy = "use fewer seeds, systems or slots"
	return e
}

// studySize is the study's nodes per type, slots, lookahead and re-plan
// interval (quick: a day on 10 nodes per type).
func studySize(quick bool) (count, slots, look, every int) {
	if quick {
		return 10, 96, 24, 4
	}
	return 40, 672, 48, 4
}

// studyArgs are CE-DLA's arguments in the study.
func studyArgs(every int) pcedla.Args {
	a := pcedla.Args{}.Default()
	// Relax and fix: the slots applied before the next plan are binary.
	a.BinarySlots = every
	// The window's first 4 hours slot by slot, the rest in blocks of an
	// hour (the price's step): about half the solve time
	// (docs/policies/cedla.md).
	a.BlockAfter, a.BlockSlots = 16, 4
	return a
}

// EstimateStudy estimates `reproduce cedla` (quick or with seeds seeds):
// its cases' largest job count, each case drawing its own workload.
func EstimateStudy(quick bool, seeds, workers int) experiment.Estimate {
	count, slots, look, every := studySize(quick)
	cases := Cases(Options{Quick: quick, Seeds: seeds})
	l := SlottedLoad{Nodes: count * len(GPUs), Slots: slots, Periods: studyArgs(every).Periods(look), Runs: len(cases), Seeds: len(cases)}
	for _, c := range cases {
		l.Jobs = max(l.Jobs, c.Jobs)
		if c.System == "CE-DLA soft" || c.System == "CE-DLA hard" {
			l.Planners++
		}
	}
	return EstimateSlotted(l, fmt.Sprintf("reproduce cedla --seeds %d (up to %d jobs a run)", seeds, l.Jobs), workers)
}
