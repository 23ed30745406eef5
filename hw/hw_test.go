package hw

import (
	"strings"
	"testing"
)

func TestDefaultCatalogMatchesPaperTableII(t *testing.T) {
	c := Default()
	// pwr-fgd Table II and Section V-B.
	cases := []struct {
		name      string
		idle, tdp Watts
	}{
		{"V100M16", 30, 300}, {"V100M32", 30, 300}, {"P100", 25, 250}, {"T4", 10, 70},
		{"A10", 30, 150}, {"G2", 30, 150}, {"G3", 50, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := c.GPU(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if g.IdleW != tc.idle || g.TDPW != tc.tdp {
				t.Errorf("%s: idle %v tdp %v, want %v %v", tc.name, g.IdleW, g.TDPW, tc.idle, tc.tdp)
			}
			if g.Source == "" {
				t.Errorf("%s: no source", tc.name)
			}
		})
	}
	cpu, err := c.CPU(DefaultCPU)
	if err != nil {
		t.Fatal(err)
	}
	if cpu.IdleW != 15 || cpu.TDPW != 120 || cpu.Cores != 16 || cpu.VCPUs() != 32 {
		t.Errorf("default CPU = %+v, want 15 W idle, 120 W TDP, 16 cores, 32 vCPU", cpu)
	}
}

func TestCatalogErrors(t *testing.T) {
	cases := map[string]string{
		"unknown field":  "gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 2\n    source: s\n    bogus: 1\n",
		"idle above tdp": "gpus:\n  - name: X\n    idle_w: 3\n    tdp_w: 2\n    source: s\n",
		"missing source": "gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 2\n",
		"bad alias":      "aliases:\n  - name: Y\n    target: nope\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc)); err == nil {
				t.Fatalf("Parse accepted %q", doc)
			}
		})
	}
	if _, err := Default().GPU("H9000"); err == nil || !strings.Contains(err.Error(), "unknown GPU model") {
		t.Fatalf("unknown model error = %v", err)
	}
}
