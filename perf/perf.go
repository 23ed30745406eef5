// Package perf models how fast a job progresses for a configuration. It
// holds PowerFlow's step-time model (Gu et al., "Energy-Efficient GPU
// Clusters Scheduling for Deep Learning", Section 4.1, eqs. 1-5) and the
// ground-truth profile library the simulator runs jobs with (library.go).
package perf

import "math"

// Config is one configuration of a data-parallel training job.
type Config struct {
	// GPUs is n, the number of GPUs; PerNode is r, GPUs on each node.
	GPUs, PerNode int
	// LocalBatch is bs = BS/n.
	LocalBatch float64
	// Freq is the GPU core frequency normalised by the GPU's default
	// (highest) frequency: f/f_max, in (0, 1].
	Freq float64
}

// SyncParams are eq. 4's parameters for one case (one node or several).
type SyncParams struct {
	Alpha, Kappa, Beta, Theta float64
}

// StepParams are the parameters of eqs. 2-5, all non-negative, Gamma1 and
// Gamma2 at least 1. Times are in seconds; frequencies enter normalised
// (Config.Freq), so Kappa terms are seconds at the default frequency.
type StepParams struct {
	AlphaIO, BetaIO                float64 // eq. 2
	AlphaGrad, BetaGrad, KappaGrad float64 // eq. 3
	Local, Node                    SyncParams
	Gamma1, Gamma2                 float64 // eq. 5
}

// Parts are the step-time components of one configuration.
type Parts struct {
	IO, Grad, Sync, Iter float64
}

// Step evaluates eqs. 2-5 for c.
//
// Eq. 4 is printed with a garbled denominator ("alpha/(f/f)"); it is read
// here as alpha/f with f normalised, the same frequency scaling as eq. 3.
// Eq. 5's outer exponent is printed as gamma2; 1/gamma2 is the only reading
// that gives the limits the paper states (sum at gamma=1, max as gamma grows).
func (p *StepParams) Step(c Config) Parts {
	bs, f, n := c.LocalBatch, c.Freq, float64(c.GPUs)
	var pt Parts
	pt.IO = p.AlphaIO + p.BetaIO*bs*float64(c.PerNode)
	pt.Grad = p.AlphaGrad + (p.BetaGrad+p.KappaGrad/f)*bs
	if c.GPUs > 1 {
		s := &p.Node
		if c.GPUs <= c.PerNode {
			s = &p.Local
		}
		pt.Sync = s.Alpha/f + (s.Kappa/f+s.Beta)*(n-2) + s.Theta
	}
	g1, g2 := p.Gamma1, p.Gamma2
	inner := math.Pow(math.Pow(pt.IO, g1)+math.Pow(pt.Grad, g1), g2/g1)
	pt.Iter = math.Pow(inner+math.Pow(pt.Sync, g2), 1/g2)
	return pt
}

// Throughput is eq. 1: iterations per second.
func (p *StepParams) Throughput(c Config) float64 { return 1 / p.Step(c).Iter }
