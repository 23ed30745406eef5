package hw

import (
	"math"
	"testing"
)

// FuzzParseCatalog: a catalog decoded from any bytes either is an error or
// holds only models whose watts are finite, 0 <= idle_w <= tdp_w <=
// MaxDeviceW (so that no sum or plot of them meets float64's extremes),
// and speed figures in [MinRelativeSpeed, MaxRelativeSpeed] with a source.
func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(defaultCatalog))
	f.Add([]byte("gpus:\n  - {name: X, idle_w: 1e30, tdp_w: 1e30, memory_gib: 1, source: s}\n"))
	f.Add([]byte("gpus:\n  - {name: X, idle_w: 1, tdp_w: 100000, memory_gib: 1, source: s, curve: [{share: 0.5, watts: 50000}]}\n"))
	f.Add([]byte("gpus:\n  - {name: X, idle_w: 1, tdp_w: 10, memory_gib: 1, source: s, speed: {training: {relative: 1e-300, source: b}, inference: {relative: .nan, source: b}}}\n"))
	f.Add([]byte("cpus:\n  - {name: C, idle_w: 0, tdp_w: 1e-300, cores: 1, threads_per_core: 1, source: s}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		ok := func(idle, tdp Watts) bool {
			return !math.IsNaN(float64(idle)) && idle >= 0 && idle <= tdp && tdp > 0 && tdp <= MaxDeviceW
		}
		for _, g := range c.GPUs {
			if !ok(g.IdleW, g.TDPW) {
				t.Fatalf("GPU %s accepted with idle_w %v, tdp_w %v", g.Name, g.IdleW, g.TDPW)
			}
			for _, w := range []string{Training, Inference} {
				if f := g.Speed.For(w); f != nil && !(f.Relative != nil && *f.Relative >= MinRelativeSpeed && *f.Relative <= MaxRelativeSpeed && f.Source != "") {
					t.Fatalf("GPU %s accepted with %s speed %+v", g.Name, w, f)
				}
			}
			for _, u := range []float64{0, 0.25, 0.5, 1} {
				if w := g.At(u); !(w >= 0 && w <= g.TDPW) {
					t.Fatalf("GPU %s draws %v W at %v, outside 0..tdp_w", g.Name, w, u)
				}
			}
		}
		for _, p := range c.CPUs {
			if !ok(p.IdleW, p.TDPW) {
				t.Fatalf("CPU %s accepted with idle_w %v, tdp_w %v", p.Name, p.IdleW, p.TDPW)
			}
		}
	})
}
