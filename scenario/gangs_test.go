package scenario

import (
	"strings"
	"testing"
)

func TestGangSpec(t *testing.T) {
	const base = "name: g\nmode: replay\ntrace: {pods: default}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"
	for _, tc := range []struct {
		text, err  string
		headOfLine bool
	}{
		{base, "", false},
		{base + "gangs: {}\n", "", false},
		{base + "gangs: {backfill: true}\n", "", false},
		{base + "gangs: {backfill: false, group_by: gpu_model}\n", "", true},
		{base + "gangs: {group_by: rack}\n", `gangs.group_by: "rack", want gpu_model, domain, domain:LEVEL or empty`, false},
		{base + "gangs: {group_by: \"domain:\"}\n", `gangs.group_by: "domain:", want gpu_model, domain, domain:LEVEL or empty`, false},
		{base + "gangs: {group_by: domain:row}\ntopology: {members: {a: r}, domains: [{name: r, level: rack, limit_w: 1000}]}\n", `gangs.group_by: "domain:row": no domain of level "row"`, false},
		{base + "gangs: {backfil: false}\n", "backfil", false},
		{strings.Replace(base, "replay", "inflation", 1) + "gangs: {}\n", "gangs: only for mode replay", false},
	} {
		s, err := Parse([]byte(tc.text), "g.yaml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if s.Gangs.HeadOfLine() != tc.headOfLine {
			t.Errorf("%q: head of line %v, want %v", tc.text, s.Gangs.HeadOfLine(), tc.headOfLine)
		}
	}
}
