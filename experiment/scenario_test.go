package experiment_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
)

func TestParseScenarioErrors(t *testing.T) {
	cases := map[string]string{
		"unknown field":  "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\nbogus: 1\n",
		"no policies":    "name: x\ntrace: {pods: default}\n",
		"zero weight":    "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 0}]}]\n",
		"bad compat":     "name: x\ntrace: {pods: default}\ncompat: kube\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\n",
		"duplicate name": "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}, {name: a, scorers: [{policy: pwr, weight: 1}]}]\n",
		"hpc pcr":        "name: x\nhpc: {swf: nasa-ipsc, pcr: 1.5}\n",
		"hpc system":     "name: x\nhpc: {swf: nasa-ipsc, systems: [VU-FCFS, EDF]}\n",
		"hpc workload":   "name: x\nhpc: {swf: nasa-ipsc, workloads: [0, 9]}\n",
		"hpc beta":       "name: x\nhpc: {swf: nasa-ipsc, beta: -1}\n",
		"hpc missing":    "name: x\nmode: hpc\n",
		"hpc no swf":     "name: x\nhpc: {jobs: 10}\n",
		"hpc + pods":     "name: x\nmode: hpc\ntrace: {pods: default}\nhpc: {swf: nasa-ipsc}\n",
		"hpc elsewhere":  "name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\nhpc: {swf: nasa-ipsc}\n",
	}
	wants := map[string]string{
		"unknown field":  "field bogus not found",
		"no policies":    "policies: none",
		"zero weight":    "policies[0].scorers[0].weight: 0",
		"bad compat":     "compat: \"kube\"",
		"duplicate name": "policies[1].name: duplicate",
		"hpc pcr":        "hpc.pcr: 1.5",
		"hpc system":     "hpc.systems[1]: \"EDF\"",
		"hpc workload":   "hpc.workloads[1]: 9",
		"hpc beta":       "hpc.beta: -1",
		"hpc missing":    "hpc: missing",
		"hpc no swf":     "hpc.swf: empty",
		"hpc + pods":     "not used in mode hpc",
		"hpc elsewhere":  "hpc: only for mode hpc",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := experiment.Parse([]byte(doc), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), wants[name]) || !strings.HasPrefix(err.Error(), "s.yaml") {
				t.Fatalf("Parse = %v, want an error naming s.yaml and %q", err, wants[name])
			}
		})
	}
}

func TestHPCScenarioDefaults(t *testing.T) {
	s, err := experiment.Parse([]byte("name: x\nhpc: {swf: nasa-ipsc, beta: 0}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := s.HPC
	if s.Mode != "hpc" || h.SR != 1 || h.PCR != 1 || *h.Beta != 0 || h.ProcsPerNode != 1 || len(h.Workloads) != 9 || len(h.Systems) != 8 || h.Systems[0] != "VU-FCFS" {
		t.Fatalf("defaults: mode %q, %+v (beta %v)", s.Mode, h, *h.Beta)
	}
}

func TestBuiltinScenarioDefaults(t *testing.T) {
	s, err := experiment.Builtin("pwr-default")
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstSeed != 42 || s.Target != 1.3 || s.Mode != "inflation" || s.ReferencePolicy() != "FGD" || len(s.Policies) != 9 {
		t.Errorf("pwr-default = %+v", s)
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add("name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\n")
	f.Add("name: [\n")
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := experiment.Parse([]byte(doc), "f.yaml")
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario that fails Validate: %v", err)
		}
	})
}

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		if _, err := experiment.Load(f); err != nil {
			t.Error(err)
		}
	}
}
