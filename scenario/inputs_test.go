package scenario

import (
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fill sets every string the schema reachable from v holds (through
// pointers, structs and slices, by YAML key) to "files/<key path>", a value
// that is never an embedded name, and returns the key paths it set.
func fill(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return fill(v.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || key == "" || key == "-" {
				continue
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			out = append(out, fill(v.Field(i), p)...)
		}
		return out
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fill(v.Index(0), path+"[]")
	case reflect.String:
		v.SetString("files/" + path)
		return []string{path}
	}
	return nil
}

var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// Every string field of the schema either names an input (Inputs lists
// it) or is known to name none: a field added to the schema fails here
// until it is one or the other, so no file a scenario names escapes the
// shards' input hashes.
func TestInputsListEveryFileField(t *testing.T) {
	notInputs := []string{
		"name", "description", "mode", "compat", "trace.reference_gpu", "power_model",
		"policies[].name", "policies[].scorers[].policy",
		"hpc.systems[].name", "hpc.systems[].policy", "hpc.systems[].predictions",
		"elastic.start", "elastic.systems[].name", "elastic.systems[].policy", "elastic.systems[].predictions",
		"coloc.arrivals", "coloc.worker", "coloc.systems[].name", "coloc.systems[].policy", "coloc.systems[].predictions", "coloc.timing", "coloc.deadlines", "coloc.failed_jobs",
		"slotted.systems[].name", "slotted.systems[].policy", "slotted.systems[].predictions", "slotted.plan_reading",
		"grid.start", "grid.carbon_basis",
		"variants[].name", "variants[].grid.start", "variants[].grid.carbon_basis",
		"measured.exporter", "measured.metric", "measured.node_label", "measured.scope", "measured.start",
		"topology.domains[].name", "topology.domains[].level", "topology.domains[].parent",
		"variants[].topology.domains[].name", "variants[].topology.domains[].level", "variants[].topology.domains[].parent",
		"gangs.group_by", "trace.shares_as_mig",
		"mig[].nodes[]", "mig[].gpu_model", "mig[].profile", "mig[].instances[].profile", "mig[].layouts[][].profile",
		"variants[].mig[].nodes[]", "variants[].mig[].gpu_model", "variants[].mig[].profile", "variants[].mig[].instances[].profile", "variants[].mig[].layouts[][].profile",
	}
	// The inline hardware catalog holds model names, no file names.
	const inline, variantInline = "hardware.", "variants[].hardware."
	s := &Scenario{dir: "scen"}
	all := fill(reflect.ValueOf(s).Elem(), "")
	listed := map[string]Input{}
	for _, in := range s.Inputs() {
		// A list's fields are listed with their index (variants[0].catalog).
		in.Field = listIndex.ReplaceAllString(in.Field, "[]")
		if _, dup := listed[in.Field]; dup {
			t.Errorf("Inputs lists %s twice", in.Field)
		}
		listed[in.Field] = in
	}
	for _, p := range all {
		in, isInput := listed[p]
		switch {
		case strings.HasPrefix(p, inline), strings.HasPrefix(p, variantInline):
		case isInput && slices.Contains(notInputs, p):
			t.Errorf("%s: listed by Inputs and as naming no input", p)
		case isInput:
			want := filepath.Join("scen", "files", p)
			if strings.HasSuffix(in.Field, "grid.region") {
				want = "" // an embedded region's name, never a file
			}
			if in.Name != "files/"+p || in.Path != want {
				t.Errorf("%s: Inputs gives %+v, want name files/%s and path %q", p, in, p, want)
			}
		case !slices.Contains(notInputs, p):
			t.Errorf("%s: a string field that Inputs does not list: if it names a file, list it in Scenario.Inputs; if not, add it to notInputs here", p)
		}
	}
	for f := range listed {
		if !slices.Contains(all, f) {
			t.Errorf("Inputs lists %s, which is no string field of the schema", f)
		}
	}
	if len(listed) < 16 {
		t.Errorf("Inputs listed %d fields of a scenario with every field set, want every file field (16)", len(listed))
	}
}

// Embedded names are recorded as names, files as paths from the
// scenario's directory (absolute paths as they are).
func TestInputsEmbeddedAndFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Scenario
		want []Input
	}{
		{"embedded trace", Scenario{dir: "d", Trace: TraceSpec{Pods: "gpushare40", Nodes: NodesOpenBGPU}},
			[]Input{{"trace.pods", "gpushare40", ""}, {"trace.nodes", NodesOpenBGPU, ""}}},
		{"trace files", Scenario{dir: "d", Trace: TraceSpec{Pods: "pods.csv", Nodes: "/abs/nodes.csv"}, Catalog: "c/hw.yaml"},
			[]Input{{"trace.pods", "pods.csv", filepath.Join("d", "pods.csv")}, {"trace.nodes", "/abs/nodes.csv", "/abs/nodes.csv"},
				{"catalog", "c/hw.yaml", filepath.Join("d", "c", "hw.yaml")}}},
		{"embedded logs", Scenario{HPC: &HPCSpec{SWF: SWFNASAiPSC}, Grid: &GridSpec{Region: "US-NY-NYIS"}},
			[]Input{{"hpc.swf", SWFNASAiPSC, ""}, {"grid.region", "US-NY-NYIS", ""}}},
		{"elastic and coloc", Scenario{Elastic: &ElasticSpec{Jobs: PhillyDay}, Coloc: &ColocSpec{Jobs: "gavel.txt"}},
			[]Input{{"elastic.jobs", PhillyDay, ""}, {"coloc.jobs", "gavel.txt", "gavel.txt"}}},
		{"coloc embedded Gavel data", Scenario{Coloc: &ColocSpec{Jobs: "gavel-max_min_fairness", Throughputs: GavelSimulation, Worker: "k80"}},
			[]Input{{"coloc.jobs", "gavel-max_min_fairness", ""}, {"coloc.throughputs", GavelSimulation, ""}}},
		{"coloc Gavel files", Scenario{dir: "d", Coloc: &ColocSpec{Jobs: "max_min_fairness.trace", Throughputs: "simulation_throughputs.json"}},
			[]Input{{"coloc.jobs", "max_min_fairness.trace", filepath.Join("d", "max_min_fairness.trace")},
				{"coloc.throughputs", "simulation_throughputs.json", filepath.Join("d", "simulation_throughputs.json")}}},
		{"slotted files", Scenario{Slotted: &SlottedSpec{Jobs: SlotJobsSpec{Count: 3}, Inference: SlotLoadSpec{File: "load.csv"}}, Measured: &MeasuredSpec{File: "m.json"}},
			[]Input{{"slotted.inference.file", "load.csv", "load.csv"}, {"measured.file", "m.json", "m.json"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Inputs(); !slices.Equal(got, c.want) {
				t.Errorf("Inputs:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}
