// Package sim is wattsched's discrete-event simulation: one event kernel
// (kernel.go: the clock, the (time, sequence) event queue, the rule for when
// the scheduler is called, run counters and the ended-once check), one
// energy ledger (ledger.go: the exact integral of piecewise-constant power
// of named components), and one engine per job model, each keeping only its
// own jobs, state and decision type:
//
//   - tasks.go: GPU-sharing tasks placed one at a time (PWR/FGD), in replay
//     or inflation mode;
//   - hpc.go: rigid HPC jobs on exclusive nodes under a power limit (VAHRM);
//   - elastic.go: elastic data-parallel training jobs with frequency
//     scaling, profiling and node power-down (PowerFlow).
//
// Every engine validates what a policy decides and fails with ErrPolicy on
// a violation. Time is job.Time (milliseconds), power hw.Watts, energy
// hw.Joules, in every engine.
package sim
