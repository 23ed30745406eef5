package experiment_test

import (
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
	}
	wants := map[string]string{
		"unknown field":  "field bogus not found",
		"no policies":    "policies: none",
		"zero weight":    "policies[0].scorers[0].weight: 0",
		"bad compat":     "compat: \"kube\"",
		"duplicate name": "policies[1].name: duplicate",
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
