package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

func TestParseScenarioErrors(t *testing.T) {
	const pol = "policies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\n"
	cases := []struct{ name, doc, want string }{
		{"unknown field", "name: x\ntrace: {pods: default}\n" + pol + "bogus: 1\n", "field bogus not found"},
		{"no policies", "name: x\ntrace: {pods: default}\n", "policies: none"},
		{"zero weight", "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 0}]}]\n", "policies[0].scorers[0].weight: 0"},
		{"bad compat", "name: x\ntrace: {pods: default}\ncompat: kube\n" + pol, "compat: \"kube\""},
		{"duplicate name", "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}, {name: a, scorers: [{policy: pwr, weight: 1}]}]\n", "policies[1].name: duplicate"},
		{"overflowing weights", "name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 92233720368547758}, {policy: pwr, weight: 2}]}]\n", "policies[0].scorers[1].weight: 2: the weights' sum"},
		{"explicit zero sr", "name: x\nmode: hpc\nhpc: {swf: nasa-ipsc, sr: 0}\n", "line 3: hpc.sr: 0; leave it out"},
		{"explicit zero seeds", "name: x\ntrace: {pods: default}\nseeds: 0\n" + pol, "line 3: seeds: 0"},
		{"NaN target", "name: x\ntrace: {pods: default}\ntarget: .nan\n" + pol, "target: NaN"},
		{"bad mode", "name: x\nmode: slottted\n", "mode: \"slottted\""},
		{"bad power model", "name: x\ntrace: {pods: default}\npower_model: tdp\n" + pol, "power_model: \"tdp\", want pwr (default) or measured-busy"},
		{"power model in mode hpc", "name: x\nmode: hpc\nhpc: {swf: nasa-ipsc}\npower_model: measured-busy\n", "power_model: only for modes inflation and replay"},
		// Start times outside 1970..2100 (issue 40).
		{"grid.start in 1900", "name: x\ntrace: {pods: default}\n" + pol + "grid: {start: \"1900-01-01 00:00:00\"}\n", `grid.start: "1900-01-01 00:00:00" is outside 1970-01-01 00:00:00..2100-01-01 00:00:00`},
		{"grid.start in 2100", "name: x\ntrace: {pods: default}\n" + pol + "grid: {start: \"2100-01-01 00:00:00\"}\n", `grid.start: "2100-01-01 00:00:00" is outside`},
		{"elastic.start in 9999", "name: x\nmode: elastic\nelastic: {jobs: j.csv, start: \"9999-01-01 00:00:00\", systems: [{name: G, policy: gandiva}]}\n", `elastic.start: "9999-01-01 00:00:00" is outside`},
		{"measured.start in year 1", "name: x\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1e6}\nmeasured: {file: m.json, start: \"0001-01-01T00:00:00Z\"}\n", `measured.start: "0001-01-01T00:00:00Z" is outside`},
		{"slotted missing", "name: x\nmode: slotted\n", "slotted: missing (mode slotted needs a slotted section)"},
		{"slotted unknown field", "name: x\nslotted: {jobs: {count: 5}, slot_minutes: 5}\n", "field slot_minutes not found"},
		{"slotted jobs unknown field", "name: x\nslotted: {jobs: {count: 5, seed: 3}}\n", "field seed not found"},
		{"slotted no jobs", "name: x\nslotted: {inference: {req_per_min: 10}}\n", "slotted.jobs.count: 0, want 1..100000 (or a file)"},
		{"slotted jobs both", "name: x\nslotted: {jobs: {count: 5, file: j.csv}}\n", "slotted.jobs: count and file both set"},
		{"slotted load both", "name: x\nslotted: {jobs: {count: 5}, inference: {req_per_min: 5, file: l.csv}}\n", "slotted.inference: req_per_min and file both set"},
		{"slotted short generated", "name: x\nslotted: {jobs: {count: 5}, slots: 48}\n", "slotted.jobs.count: generated jobs need slots >= 96"},
		{"slotted zero slots", "name: x\nslotted: {jobs: {count: 5}, slots: 0}\n", "line 2: slotted.slots: 0; leave it out"},
		{"slotted lookahead", "name: x\nslotted: {jobs: {count: 5}, lookahead: 2, replan_every: 4}\n", "slotted.lookahead: 2, want replan_every (4)..384"},
		{"slotted nodes", "name: x\nslotted: {jobs: {count: 5}, nodes: {RTX2060: -1}}\n", "slotted.nodes.RTX2060: -1"},
		{"slotted no nodes", "name: x\nslotted: {jobs: {count: 5}, nodes: {RTX2060: 0}}\n", "slotted.nodes: no nodes"},
		{"slotted preset", "name: x\nslotted: {jobs: {count: 5}, systems: [CE-DLA]}\n", "slotted.systems[0]: \"CE-DLA\", want a system spec or a preset"},
		{"slotted power limit", "name: x\nslotted: {jobs: {count: 5}}\npower_limit: {watts: 100}\n", "power_limit: not used by mode slotted"},
		{"slotted pue", "name: x\nslotted: {jobs: {count: 5}}\ngrid: {pue: 1.2}\n", "grid.pue: not used by mode slotted"},
		{"slotted elsewhere", "name: x\nmode: coloc\ncoloc: {jobs: gavel-msr}\nslotted: {jobs: {count: 5}}\n", "slotted: only for mode slotted"},
		{"limit both", "name: x\ntrace: {pods: default}\npower_limit: {watts: 5, tdp_fraction: 0.5}\n" + pol, "power_limit: watts and tdp_fraction both set"},
		{"limit fraction", "name: x\ntrace: {pods: default}\npower_limit: {tdp_fraction: 1.5}\n" + pol, "power_limit.tdp_fraction: 1.5"},
		{"limit empty", "name: x\ntrace: {pods: default}\npower_limit: {}\n" + pol, "power_limit: neither"},
		{"limit unknown", "name: x\ntrace: {pods: default}\npower_limit: {kw: 3}\n" + pol, "field kw not found in type scenario.Limit"},
		{"hpc system", "name: x\nhpc: {swf: nasa-ipsc, systems: [VU-FCFS, EDF]}\n", "hpc.systems[1]: \"EDF\""},
		{"hpc system field", "name: x\nhpc: {swf: nasa-ipsc, systems: [{name: a, policy: fcfs, predictions: ideal, colour: red}]}\n", "field colour not found in type scenario.System"},
		{"hpc predictions", "name: x\nhpc: {swf: nasa-ipsc, systems: [{name: a, policy: fcfs}]}\n", "hpc.systems[0].predictions: \"\""},
		{"hpc duplicate", "name: x\nhpc: {swf: nasa-ipsc, systems: [VU-FCFS, VU-FCFS]}\n", "hpc.systems[1].name: \"VU-FCFS\", want a distinct name"},
		{"hpc workload", "name: x\nhpc: {swf: nasa-ipsc, workloads: [0, 9]}\n", "hpc.workloads[1]: 9"},
		{"hpc sr", "name: x\nhpc: {swf: nasa-ipsc, sr: -1}\n", "hpc.sr: -1"},
		{"hpc missing", "name: x\nmode: hpc\n", "hpc: missing"},
		{"hpc no swf", "name: x\nhpc: {jobs: 10}\n", "hpc.swf: empty"},
		{"hpc + pods", "name: x\nmode: hpc\ntrace: {pods: default}\nhpc: {swf: nasa-ipsc}\n", "only for modes inflation and replay"},
		{"hpc elsewhere", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "hpc: {swf: nasa-ipsc}\n", "hpc: only for mode hpc"},
		{"power_down elsewhere", "name: x\nmode: inflation\ntrace: {pods: default}\n" + pol + "power_down: {idle_after_s: 60}\n", "power_down: only for mode replay"},
		{"power_down negative", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_down: {idle_after_s: 60, wake_s: -1}\n", "power_down.wake_s: -1"},
		{"power_down unknown field", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_down: {idle_after: 60}\n", "idle_after"},
		{"measured elsewhere", "name: x\nmode: inflation\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json}\n", "measured: only for mode replay"},
		{"measured without a limit", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "measured: {file: m.json}\n", "measured: needs power_limit"},
		{"measured no file", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {exporter: dcgm}\n", "measured.file: empty"},
		{"measured exporter", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, exporter: dgcm}\n", `measured.exporter: "dgcm"`},
		{"measured scope", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, scope: rack}\n", `measured.scope: "rack"`},
		{"measured start", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, start: 2023-13-01}\n", `measured.start: "2023-13-01", want "YYYY-MM-DD hh:mm:ss"`},
		{"measured stale zero", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, stale_after_s: 0}\n", "line 6: measured.stale_after_s: 0; leave it out"},
		{"measured stale negative", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, stale_after_s: -5}\n", "measured.stale_after_s: -5, want (0, 86400]"},
		{"measured max inf", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, max_series_w: .inf}\n", "measured.max_series_w: +Inf"},
		{"measured unknown field", "name: x\nmode: replay\ntrace: {pods: default}\n" + pol + "power_limit: {watts: 1000}\nmeasured: {file: m.json, stale_after: 60}\n", "field stale_after not found"},
		{"elastic nodes", "name: x\nelastic: {jobs: philly-day, nodes: 0, systems: [PowerFlow]}\n", "elastic.nodes: 0; leave it out"},
		{"elastic start", "name: x\nelastic: {jobs: philly-day, start: '2017-10-13 00:00:00', systems: [Gandiva]}\n", "elastic.start: only for a Philly job table file"},
		{"elastic hours with philly-day", "name: x\nelastic: {jobs: philly-day, hours: 1e-300, systems: [Gandiva]}\n", "elastic.hours: 1e-300: only for a Philly job table file"},
		{"elastic no systems", "name: x\nelastic: {jobs: philly-day}\n", "elastic.systems: none"},
		{"elastic predictions", "name: x\nelastic: {jobs: philly-day, systems: [{name: p, policy: powerflow, predictions: psychic}]}\n", "elastic.systems[0].predictions: \"psychic\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(c.doc), "s.yaml")
			if c.want == "" {
				if err != nil {
					t.Fatalf("Parse = %v, want no error (a default applies)", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.yaml") {
				t.Fatalf("Parse = %v, want an error naming s.yaml and %q", err, c.want)
			}
		})
	}
}

// Names and arguments are checked against the registries before any work,
// with the field path of each bad one.
func TestCheckAgainstRegistries(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fdg, weight: 1}]}]\n",
			`policies[0].scorers[0]: unknown placement policy "fdg" (known: fgd, pwr, energy, bestfit, dotprod, gpupacking, gpuclustering)`},
		{"name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1, args: {popularity_threshold: 0}}]}]\n",
			"policies[0].scorers[0]: fgd args: fgd.popularity_threshold"},
		{"name: x\nhpc: {swf: nasa-ipsc, systems: [{name: v, policy: vahrm, args: {beta: 2}, predictions: ideal}]}\n",
			"hpc.systems[0] (v): vahrm args: vahrm.beta: 2"},
		{"name: x\nhpc: {swf: nasa-ipsc, systems: [{name: v, policy: edf, predictions: ideal}]}\n",
			`hpc.systems[0] (v): unknown HPC policy "edf"`},
		{"name: x\nelastic: {jobs: philly-day, systems: [{name: g, policy: gandiva, args: {freq: 1}}]}\n",
			"elastic.systems[0] (g): gandiva args: yaml: unmarshal errors:\n  line 1: field freq not found"},
		{"name: x\nelastic: {jobs: philly-day, systems: [{name: z, policy: zeus, args: {base: {policy: zeus}}}]}\n",
			"zeus.base.policy"},
		{"name: x\nslotted: {jobs: {count: 5}, systems: [{name: c, policy: cedla, args: {mode: soft, gap: 0.1}}]}\n",
			"field gap not found in type cedla.Args"},
		{"name: x\nslotted: {jobs: {count: 5}, systems: [{name: c, policy: cedla, args: {mode: medium}}]}\n",
			`slotted.systems[0] (c): cedla args: cedla.mode: "medium"`},
		{"name: x\nslotted: {jobs: {count: 5}, systems: [{name: f, policy: fifo, args: {sleep_idle: true}}]}\n",
			"slotted.systems[0] (f): fifo args: yaml: unmarshal errors:\n  line 1: field sleep_idle not found"},
		{"name: x\nslotted: {jobs: {count: 5}, systems: [{name: e, policy: eaco}]}\n",
			`slotted.systems[0] (e): unknown slotted policy "eaco" (known: cedla, fifo, eprons, pambt)`},
		{"name: x\nslotted: {jobs: {count: 5}, replan_every: 8, systems: [{name: c, policy: cedla, args: {binary_slots: 1}}]}\n",
			"slotted.systems[0] (c): binary_slots 1 is less than replan_every 8"},
	}
	r := builtin.Registries()
	for _, c := range cases {
		s, err := scenario.Parse([]byte(c.doc), "s.yaml")
		if err != nil {
			t.Fatalf("%q: %v", c.doc, err)
		}
		if err := s.Check(r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check = %v, want %q", err, c.want)
		}
	}
}

func TestHPCScenarioDefaults(t *testing.T) {
	s, err := scenario.Parse([]byte("name: x\nhpc: {swf: nasa-ipsc}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := s.HPC
	if s.Mode != scenario.HPC || h.SR != 1 || s.PowerLimit != nil || h.ProcsPerNode != 1 || len(h.Workloads) != 9 || len(h.Systems) != 8 ||
		h.Systems[0].Name != "VU-FCFS" || h.Systems[0].Policy != "fcfs" || h.Systems[7].Predictions != "ideal" {
		t.Fatalf("defaults: mode %q, %+v", s.Mode, h)
	}
	if err := s.Check(builtin.Registries()); err != nil {
		t.Fatalf("the paper's systems fail the registries: %v", err)
	}
}

// A slotted section with only jobs gets the study's quick settings and the
// paper's five systems, which pass the registries.
func TestSlottedScenarioDefaults(t *testing.T) {
	s, err := scenario.Parse([]byte("name: x\nslotted: {jobs: {count: 20}}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Slotted
	if s.Mode != scenario.Slotted || c.Slots != 96 || c.Lookahead != 24 || c.ReplanEvery != 4 || c.Nodes != nil || c.Inference.ReqPerMin != 0 || len(c.Systems) != 5 ||
		c.Systems[0].Name != "CE-DLA soft" || c.Systems[1].Args["mode"] != "hard" || c.Systems[4].Policy != "pambt" {
		t.Fatalf("defaults: mode %q, %+v", s.Mode, c)
	}
	if err := s.Check(builtin.Registries()); err != nil {
		t.Fatalf("the paper's systems fail the registries: %v", err)
	}
}

// CE-DLA's blocks need binary slots; in a scenario binary_slots defaults
// to replan_every, so block_slots alone is accepted.
func TestSlottedBlocksWithDefaultBinarySlots(t *testing.T) {
	s, err := scenario.Parse([]byte("name: x\nslotted: {jobs: {count: 20}, systems: [{name: c, policy: cedla, args: {block_slots: 4, block_after_slots: 16}}]}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(builtin.Registries()); err != nil {
		t.Fatal(err)
	}
	if got := s.Slotted.PlannerSystem(s.Slotted.Systems[0]).Args["binary_slots"]; got != 4 {
		t.Errorf("binary_slots %v, want replan_every (4)", got)
	}
}

func TestElasticPresetsPassTheRegistries(t *testing.T) {
	var names []string
	for _, p := range scenario.ElasticSystems() {
		names = append(names, p.Name)
	}
	s, err := scenario.Parse([]byte("name: x\nelastic: {jobs: philly-day, systems: ["+strings.Join(names, ", ")+"]}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != scenario.Elastic || s.Elastic.Nodes != 24 || s.Elastic.Hours != 24 || len(s.Elastic.Systems) != 7 {
		t.Fatalf("defaults: %+v", s.Elastic)
	}
	if err := s.Check(builtin.Registries()); err != nil {
		t.Fatal(err)
	}
}

func TestBuiltinScenarioDefaults(t *testing.T) {
	s, err := scenario.Builtin("pwr-default")
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstSeed != 42 || s.Target != 1.3 || s.Mode != scenario.Inflation || s.ReferencePolicy() != "FGD" || len(s.Policies) != 9 {
		t.Errorf("pwr-default = %+v", s)
	}
	if err := s.Check(builtin.Registries()); err != nil {
		t.Error(err)
	}
}

// The power limit resolves against the TDP the engine models.
func TestLimitResolve(t *testing.T) {
	var none *scenario.Limit
	if none.Resolve(1000) != 0 || (&scenario.Limit{Watts: 300}).Resolve(1000) != 300 || (&scenario.Limit{TDPFraction: 0.25}).Resolve(1000) != 250 {
		t.Error("Resolve: want none, 300 W and 0.25 x 1000 W")
	}
}

// Relative paths resolve from the scenario file's directory.
func TestPathsFromTheScenarioFile(t *testing.T) {
	s, err := scenario.Load("../examples/hpc-vahrm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Path("logs/a.swf"), filepath.Join("..", "examples", "logs", "a.swf"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got := s.Path("/abs/a.swf"); got != "/abs/a.swf" {
		t.Errorf("absolute path changed: %q", got)
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add("name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\n")
	f.Add("name: x\nhpc: {swf: nasa-ipsc, systems: [VU-FCFS, {name: v, policy: vahrm, predictions: ideal}]}\npower_limit: {tdp_fraction: 0.5}\n")
	f.Add("name: x\nelastic: {jobs: philly-day, systems: [PowerFlow, Gandiva]}\n")
	f.Add("name: x\nslotted: {nodes: {RTX2060: 3}, jobs: {count: 5}, systems: [FIFO, {name: c, policy: cedla, args: {mode: hard}}]}\n")
	f.Add("name: x\ncoloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: 360, reset_s: 1920, deadlines: none, systems: [FIFO, Gandiva]}\n")
	f.Add("name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\npower_limit: {watts: 1000}\nmeasured: {file: m.json, start: '2023-01-01 00:00:00'}\n")
	f.Add("name: [\n")
	f.Add("name: x\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\nseeds: &z 0x0\n---\n")
	f.Add("name: x\nhpc: {swf: nasa-ipsc, jobs: &j 0, sr: *j, <<: {procs_per_node: 2.5}}\n")
	f.Add("# only a comment\n")
	f.Add("name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\npower_limit: {watts: 9000}\nvariants: [{name: pd, power_down: {idle_after_s: 60, wake_s: 1, off_w: 1}}, {name: p, pue: 1.5, no_power_limit: true}, {name: g, grid: {region: US-CAL-CISO}, hardware: {gpus: []}}]\n")
	f.Add("name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\nvariants: [{name: a, pue: 1.2}, {name: a, catalog: c.yaml}]\n")
	f.Add("name: x\nmode: replay\ntrace: {pods: default, shares_as_mig: A100}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\nmig: [{gpu_model: G3, profile: 1g.10gb}, {nodes: [n1], instances: [{profile: 3g.40gb, start: 4}]}, {nodes: [n2], layouts: [[{profile: 7g.80gb, start: 0}]]}]\nvariants: [{name: d, mig: [{gpu_model: G3, dynamic: true}]}, {name: n, no_mig: true}]\n")
	r := builtin.Registries()
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := scenario.Parse([]byte(doc), "f.yaml")
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario that fails Validate: %v", err)
		}
		// Every setting compare runs is a valid scenario of its own.
		if s.Mode == scenario.Replay {
			for _, v := range s.CompareVariants() {
				if err := s.WithVariant(v).Validate(); err != nil {
					t.Fatalf("variant %q of a valid scenario fails Validate: %v", v.Name, err)
				}
			}
		}
		if len(s.Description) > scenario.MaxDescriptionBytes || len(s.Name) > scenario.MaxNameBytes || s.FirstSeed == 0 {
			t.Fatalf("Parse accepted a description of %d bytes, a name of %d, first_seed %d", len(s.Description), len(s.Name), s.FirstSeed)
		}
		_ = s.Check(r) // must not panic
	})
}

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		s, err := scenario.Load(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := s.Check(builtin.Registries()); err != nil {
			t.Error(err)
		}
	}
}

// A scenario's catalog file (relative to the scenario) and hardware
// section add models to the base catalog; both are refused in modes that
// run a paper's own hardware.
func TestHardwareCatalog(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cat.yaml"), []byte("gpus:\n  - {name: L40S-measured, idle_w: 35, tdp_w: 350, memory_gib: 48, source: test}\n"), 0o644)
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte(`name: hw
mode: inflation
seeds: 1
trace: {pods: default}
catalog: cat.yaml
hardware:
  gpus: [{name: H100-SXM5, idle_w: 70, tdp_w: 700, memory_gib: 80, source: test}]
policies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]
`), 0o644)
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.HardwareCatalog(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"L40S-measured", "H100-SXM5", "A100"} {
		if _, err := c.GPU(m); err != nil {
			t.Error(err)
		}
	}
	if _, err := scenario.Parse([]byte("name: x\nmode: hpc\nhardware: {gpus: []}\nhpc: {}\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "hardware: only for modes inflation and replay") {
		t.Errorf("hardware in mode hpc: %v", err)
	}
	// power_model measured-busy: the catalog's V100 draws its busy_w
	// (172.1 W) at any allocation instead of its 300 W TDP; the scenario's
	// own models need a busy_w too.
	os.WriteFile(path, []byte("name: hw\nmode: inflation\nseeds: 1\ntrace: {pods: default}\npower_model: measured-busy\npolicies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
	if s, err = scenario.Load(path); err != nil {
		t.Fatal(err)
	}
	if c, err = s.HardwareCatalog(hw.Default()); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.GPU("V100M16"); v.At(0.5) != 172.1 {
		t.Errorf("measured-busy V100M16 at half a GPU: %v W, want its busy_w 172.1", v.At(0.5))
	}
	os.WriteFile(path, []byte("name: hw\nmode: inflation\nseeds: 1\ntrace: {pods: default}\ncatalog: missing.yaml\npolicies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
	s, err = scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.HardwareCatalog(hw.Default()); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing catalog file: %v", err)
	}
}

// The measured section's file is read relative to the scenario file;
// errors name the section, the file and the JSON path, and the start
// defaults to the file's first point.
func TestRecordedFile(t *testing.T) {
	dir := t.TempDir()
	const head = "name: x\nmode: replay\ntrace: {pods: default}\npolicies: [{name: a, scorers: [{policy: fgd, weight: 1}]}]\npower_limit: {watts: 1000}\n"
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.json", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"n1"},"values":[[1700000000,"80"],[1700000060,"90"]]}]}}`)
	write("bad.json", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"Hostname":"n1"},"values":[[1700000000,"eighty"]]}]}}`)
	write("util.json", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","Hostname":"n1"},"values":[[1700000000,"80"]]}]}}`)
	for _, c := range []struct{ measured, want string }{
		{"{file: ok.json}", ""},
		{"{file: ok.json, start: '2023-11-14 22:00:00'}", ""},
		{"{file: missing.json}", "measured.file: open"},
		{"{file: bad.json}", `bad.json: data.result[0].values[0]: [1]: "eighty" is not a number`},
		{"{file: util.json}", `util.json: no series with __name__ "DCGM_FI_DEV_POWER_USAGE"`},
	} {
		path := filepath.Join(dir, "s.yaml")
		write("s.yaml", head+"measured: "+c.measured+"\n")
		s, err := scenario.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		rec, start, err := s.Recorded()
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want %q", c.measured, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.measured, err)
		}
		want := time.Unix(1700000000, 0).UTC()
		if strings.Contains(c.measured, "start") {
			want = time.Date(2023, 11, 14, 22, 0, 0, 0, time.UTC)
		}
		if !start.Equal(want) || rec.Series() != 1 {
			t.Errorf("%s: start %v, %d series; want %v and 1", c.measured, start, rec.Series(), want)
		}
	}
}

// TestParseDecoding: the decoding layer (issue 28): one document, numbers
// an integer field holds exactly, zero in any spelling caught where zero
// means the default, no control characters, bounded text.
func TestParseDecoding(t *testing.T) {
	const head = "name: x\ntrace: {pods: default}\npolicies: [{name: p, scorers: [{policy: fgd, weight: 1}]}]\n"
	for _, c := range []struct {
		name, doc, want string // want: "" for a valid document
	}{
		{"empty", "", "scenario s.yaml is empty"},
		{"comments only", "# a\n  # b\n\n", "scenario s.yaml is empty"},
		{"document marker only", "---\n", "scenario s.yaml is empty"},
		{"second document", head + "---\nname: y\n", "s.yaml: line 5: a second YAML document"},
		{"seeds 2.5", head + "seeds: 2.5\n", "s.yaml: line 4: seeds: 2.5 is not an integer"},
		{"seeds 2.0 is 2", head + "seeds: 2.0\n", ""},
		{"weight 1.9", "name: x\ntrace: {pods: default}\npolicies: [{name: p, scorers: [{policy: fgd, weight: 1.9}]}]\n", "line 3: policies[0].scorers[0].weight: 1.9 is not an integer"},
		{"first_seed 2^64", head + "first_seed: 18446744073709551616\n", "first_seed: 18446744073709551616 is out of range"},
		{"first_seed 2^64-1", head + "first_seed: 18446744073709551615\n", ""},
		{"first_seed wraps", head + "first_seed: 18446744073709551615\nseeds: 2\n", "would pass 2^64-1 and wrap"},
		{"first_seed 0", head + "first_seed: 0\n", "line 4: first_seed: 0; leave it out for the default"},
		{"seeds 0x0", head + "seeds: 0x0\n", "line 4: seeds: 0x0 (zero); leave it out"},
		{"seeds 0o0", head + "seeds: 0o0\n", "seeds: 0o0 (zero)"},
		{"seeds +0", head + "seeds: +0\n", "seeds: +0 (zero)"},
		{"seeds -0", head + "seeds: -0\n", "seeds: -0 (zero)"},
		{"target 0.0e0", head + "target: 0.0e0\n", "target: 0.0e0 (zero)"},
		{"target alias to 0", "zero: &z 0\n" + head + "target: *z\n", "field zero not found"},
		{"sr alias to 0", "name: x\nhpc: {swf: nasa-ipsc, jobs: &z 0, sr: *z}\n", "line 2: hpc.sr: 0; leave it out"},
		{"hours merge key 0", "name: x\nelastic:\n  <<: {hours: 0x0}\n  jobs: philly-day\n", "elastic.hours: 0x0 (zero)"},
		{"coloc nodes 0", "name: x\ncoloc: {jobs: gavel-msr, nodes: 0}\n", "coloc.nodes: 0; leave it out"},
		{"NUL in name", "name: \"a\\0\"\ntrace: {pods: default}\npolicies: [{name: p, scorers: [{policy: fgd, weight: 1}]}]\n", `line 1: name: "a\x00" holds a control character`},
		{"tab in policy name", "name: x\ntrace: {pods: default}\npolicies: [{name: \"p\\tq\", scorers: [{policy: fgd, weight: 1}]}]\n", `policies[0].name: "p\tq" holds a control character`},
		{"bell in a key", "name: x\ntrace: {pods: default}\npolicies: [{name: p, scorers: [{policy: fgd, weight: 1, args: {\"a\\a\": 1}}]}]\n", "policies[0].scorers[0].args (a key): \"a\\a\" holds a control character"},
		{"newline in a preset system", "name: x\nhpc: {swf: nasa-ipsc, systems: [\"VU-FCFS\\n\"]}\n", `hpc.systems[0].name: "VU-FCFS\n" holds a control character`},
		{"newline in a description", head + "description: |\n  two\n  lines\n", ""},
		{"escape in a description", head + "description: \"\\e[2J\"\n", "description: \"\\x1b[2J\" holds a control character"},
		{"long name", "name: " + strings.Repeat("n", 257) + "\ntrace: {pods: default}\npolicies: [{name: p, scorers: [{policy: fgd, weight: 1}]}]\n", "name: 257 bytes, more than 256"},
		{"description of 4 KiB", head + "description: " + strings.Repeat("d", 4096) + "\n", ""},
		{"description past 4 KiB", head + "description: " + strings.Repeat("d", 4097) + "\n", "description: 4097 bytes, more than 4 KiB"},
		{"past 4 MiB", head + strings.Repeat("#\n", 2<<20+1), "larger than 4 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(c.doc), "s.yaml")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Parse = %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Parse = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// Load reads through the bounds of a scenario file: /dev/zero fails at its
// first byte.
func TestLoadDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	_, err := scenario.Load("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero is a character device, want a regular file") {
		t.Fatalf("Load(/dev/zero) = %v", err)
	}
}
