package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
)

const migBase = "name: m\nmode: replay\ntrace: {pods: default}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"

func migNodes() []cluster.NodeSpec {
	return []cluster.NodeSpec{
		{Name: "a0", GPUs: 2, GPUModel: "A100"},
		{Name: "g3", GPUs: 1, GPUModel: "G3"}, // the catalog's alias of A100
		{Name: "h0", GPUs: 1, GPUModel: "H100"},
		{Name: "v0", GPUs: 1, GPUModel: "V100M16"},
		{Name: "cpu", GPUs: 0},
	}
}

// The mig section puts nodes in MIG mode: single strategy (every GPU cut
// into one profile at its legal starts), an explicit layout, one layout
// per GPU (dynamic MIG: TestMIGBadInput's groups).
func TestMIGApply(t *testing.T) {
	s, err := Parse([]byte(migBase+`mig:
  - gpu_model: A100
    profile: 3g.40gb
  - nodes: [g3]
    instances: [{profile: 4g.40gb, start: 0}, {profile: 1g.10gb, start: 6}]
  - nodes: [h0]
    layouts: [[{profile: 2g.20gb, start: 2}]]
`), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := migNodes()
	if err := s.ApplyMIG(nodes); err != nil {
		t.Fatal(err)
	}
	// 3g.40gb starts at 0 and 4 (hw/mig.yaml): two per A100.
	two3g := []cluster.MIGSlot{{Profile: "3g.40gb", Start: 0}, {Profile: "3g.40gb", Start: 4}}
	want := []*cluster.MIGSpec{
		{Layouts: [][]cluster.MIGSlot{two3g, two3g}},
		{Layouts: [][]cluster.MIGSlot{{{Profile: "4g.40gb", Start: 0}, {Profile: "1g.10gb", Start: 6}}}},
		{Layouts: [][]cluster.MIGSlot{{{Profile: "2g.20gb", Start: 2}}}},
		nil, nil,
	}
	var got []*cluster.MIGSpec
	for _, n := range nodes {
		got = append(got, n.MIG)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MIG specs (-want +got):\n%s", d)
	}
}

// Bad MIG sections: a clear error naming the file, the line and the field.
func TestMIGBadInput(t *testing.T) {
	for name, tc := range map[string]struct{ mig, want string }{
		"profile the model lacks": {"mig:\n  - gpu_model: A100\n    profile: 3g.20gb\n",
			`m.yaml: line 6: mig[0]: profile: node a0: MIG profile "3g.20gb": A100-SXM4-80GB has 1g.10gb`},
		"layout breaking the placement rules": {"mig:\n  - nodes: [g3]\n    instances: [{profile: 3g.40gb, start: 2}]\n",
			"m.yaml: line 6: mig[0]: instances: node g3: MIG layout on A100-SXM4-80GB: invalid allocation: 3g.40gb may not start at memory slice 2 (starts [0 4])"},
		"overlapping instances": {"mig:\n  - nodes: [g3]\n    instances: [{profile: 4g.40gb, start: 0}, {profile: 3g.40gb, start: 0}]\n",
			"memory slice 0 is taken"},
		"too many of a profile": {"mig:\n  - nodes: [g3]\n    instances: [{profile: 1g.10gb+me, start: 0}, {profile: 1g.10gb+me, start: 1}]\n",
			"1g.10gb+me: the GPU already holds its max 1"},
		"model without MIG": {"mig:\n  - nodes: [v0]\n    dynamic: true\n",
			"m.yaml: line 6: mig[0]: node v0: GPU model V100M16 has no MIG geometry"},
		"node in two groups": {"mig:\n  - gpu_model: A100\n    dynamic: true\n  - nodes: [a0]\n    dynamic: true\n",
			"m.yaml: line 8: mig[1]: node a0 is already in MIG mode by mig[0]"},
		"unknown node":                         {"mig:\n  - nodes: [zz]\n    dynamic: true\n", "m.yaml: line 6: mig[0]: nodes: no node zz in the node list"},
		"node without GPUs":                    {"mig:\n  - nodes: [cpu]\n    dynamic: true\n", "nodes: node cpu has no GPUs"},
		"model on no node":                     {"mig:\n  - gpu_model: B200\n    dynamic: true\n", "gpu_model B200: no node with GPUs has it"},
		"layouts not one per GPU":              {"mig:\n  - nodes: [a0]\n    layouts: [[{profile: 7g.80gb, start: 0}]]\n", "m.yaml: line 6: mig[0]: layouts: 1, node a0 has 2 GPUs: want one per GPU"},
		"layout of one GPU breaking the rules": {"mig:\n  - nodes: [a0]\n    layouts: [[{profile: 7g.80gb, start: 0}], [{profile: 2g.20gb, start: 1}]]\n", "mig[0]: layouts[1]: node a0: MIG layout on A100-SXM4-80GB: invalid allocation: 2g.20gb may not start at memory slice 1"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Parse([]byte(migBase+tc.mig), "m.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = s.ApplyMIG(migNodes())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// What needs no node list is checked when the file is read.
func TestMIGValidate(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"two layout kinds":  {migBase + "mig:\n  - gpu_model: A100\n    profile: 1g.10gb\n    dynamic: true\n", "line 6: mig[0]: give one of profile (single strategy), instances (an explicit layout), layouts (one per GPU) or dynamic: true"},
		"no layout":         {migBase + "mig:\n  - gpu_model: A100\n", "line 6: mig[0]: give one of profile"},
		"two selectors":     {migBase + "mig:\n  - gpu_model: A100\n    nodes: [a0]\n    dynamic: true\n", "line 6: mig[0]: give nodes or gpu_model, one of them"},
		"instance no start": {migBase + "mig:\n  - nodes: [a0]\n    instances: [{profile: 1g.10gb}]\n", "mig[0].instances[0]: want a profile and a start memory slice"},
		"unknown field":     {migBase + "mig:\n  - nodes: [a0]\n    dynamc: true\n", "dynamc"},
		"empty":             {migBase + "mig: []\n", "line 5: mig: empty"},
		"wrong mode":        {strings.Replace(migBase, "replay", "hpc", 1) + "mig:\n  - nodes: [a0]\n    dynamic: true\n", "mig: only for modes replay and inflation"},
		"node listed twice": {migBase + "mig:\n  - nodes: [a0, a0]\n    dynamic: true\n", "mig[0].nodes: a0 twice"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
