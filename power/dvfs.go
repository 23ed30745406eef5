package power

import "math"

// Piecewise is a function of normalised frequency u = f/f_max that is
// Low[0]*u + Low[1] below the breakpoint U0 and
// High[0]*u^3 + High[1]*u^2 + High[2]*u + High[3] at or above it
// (PowerFlow eqs. 13 and 14).
type Piecewise struct {
	Low  [2]float64
	High [4]float64
}

// At evaluates the function at u with breakpoint u0.
func (p *Piecewise) At(u, u0 float64) float64 {
	if u < u0 {
		return p.Low[0]*u + p.Low[1]
	}
	return ((p.High[0]*u+p.High[1])*u+p.High[2])*u + p.High[3]
}

// BatchTerm is alpha*ln(bs+theta) + beta, eq. 12's dependence on the
// per-GPU batch size. (The printed "log(bs + theta + beta)" is read with
// beta outside the logarithm: inside it would duplicate theta.)
type BatchTerm struct {
	Alpha, Theta, Beta float64
}

// At evaluates the term at batch size bs.
func (b *BatchTerm) At(bs float64) float64 { return b.Alpha*math.Log(bs+b.Theta) + b.Beta }

// DVFSParams are PowerFlow's GPU energy model (Section 4.2, eqs. 6-15) for
// one DNN model on one GPU type. Powers are watts per GPU; U0 is the
// breakpoint f0 normalised by the default frequency.
type DVFSParams struct {
	U0 float64
	// KappaGrad is eq. 13; GradLow/GradHigh are eq. 12 below/above U0.
	KappaGrad         Piecewise
	GradLow, GradHigh BatchTerm
	// Sync is eq. 14.
	Sync Piecewise
	// StaticLow and StaticHigh are eq. 15: P_static_l below U0, c_h*u above.
	StaticLow, StaticHigh float64
}

// Powers returns P_grad, P_sync and P_static (watts per GPU) at per-GPU
// batch size bs and normalised frequency u.
func (p *DVFSParams) Powers(bs, u float64) (grad, sync, static float64) {
	k := p.KappaGrad.At(u, p.U0)
	if u < p.U0 {
		grad = k * p.GradLow.At(bs)
		static = p.StaticLow
	} else {
		grad = k * p.GradHigh.At(bs)
		static = p.StaticHigh * u
	}
	return grad, p.Sync.At(u, p.U0), static
}

// IterJoules is eqs. 6-9: GPU energy of one iteration on n GPUs, given the
// step-time parts (seconds) of the same configuration.
func (p *DVFSParams) IterJoules(n int, bs, u, tGrad, tSync, tIter float64) float64 {
	g, s, st := p.Powers(bs, u)
	return float64(n) * (g*tGrad + s*tSync + st*tIter)
}
