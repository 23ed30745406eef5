package scenario

import (
	"strings"
	"testing"
)

// Bounds that keep a run's times inside int64 milliseconds and its hourly
// energy record bounded, checked at validation with the field named
// (issue 28).
func TestRunBounds(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"sr tiny", "hpc: {swf: nasa-ipsc, sr: 1e-300}", "hpc.sr: 1e-300, want 0.001..1000"},
		{"sr lowest", "hpc: {swf: nasa-ipsc, sr: 0.001}", ""},
		{"ppn huge", "hpc: {swf: nasa-ipsc, procs_per_node: 9223372036854775807}", "hpc.procs_per_node: 9223372036854775807, want 1..10000000"},
		{"per_hour tiny", "coloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 1e-300, count: 3}", "coloc.per_hour: 1e-300, want 0.01..10000"},
		{"per_hour lowest", "coloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 0.01, count: 876}", ""},
		// 877 jobs at 0.01 per hour: 87,700 h > 87,600 h
		{"arrival span", "coloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 0.01, count: 877}", "coloc.count / coloc.per_hour: 877 jobs at 0.01 per hour arrive over about 87700 h"},
		// a zero-node cluster silently ran on the default 28 nodes
		{"coloc nodes 0", "coloc: {jobs: gavel-msr, nodes: 0}", "line 2: coloc.nodes: 0; leave it out for the default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("name: t\n"+tc.yaml+"\n"), "t.yaml")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid scenario refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
