package cedla

import (
	"strings"
	"testing"
)

// Penalties are bounded (issue 40: late_penalty_usd: 1e308 failed the run
// at slot 10): above MaxPenaltyUSD each is an error naming its field; the
// bound itself is accepted.
func TestPenaltyBounds(t *testing.T) {
	for _, c := range []struct {
		field string
		set   func(*Args, float64)
	}{
		{"late_penalty_usd", func(a *Args, v float64) { a.LatePenalty = v }},
		{"latency_penalty_usd", func(a *Args, v float64) { a.LatencyPenalty = v }},
		{"hard_latency_penalty_usd", func(a *Args, v float64) { a.HardLatencyPenalty = v }},
	} {
		a := Args{}.Default()
		c.set(&a, MaxPenaltyUSD)
		if err := a.Validate(); err != nil {
			t.Errorf("%s at the bound: %v", c.field, err)
		}
		c.set(&a, 1e308)
		if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "cedla."+c.field+": 1e+308, want (0, 1e+06] USD") {
			t.Errorf("%s 1e308: %v", c.field, err)
		}
	}
}
