package cli

import "fmt"

// variantsScenario is a replay of a one-pod trace on the embedded openb
// cluster with the variants given.
const (
	variantsScenario = "name: v\nmode: replay\ntrace: {pods: ./pods.csv}\npolicies:\n" +
		"  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\nvariants:\n%s"
	variantsPod = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,1000,1024,1,500,,LS,Running,0,3600,\n"
)

// hostileVariants: compare's variants and --equivalence (issue 27):
// refused before any run, naming the file, line or field; nothing
// written.
var hostileVariants = []hostileCase{
	{name: "variant overrides an unknown field", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - name: x\n    power_dwn: {idle_after_s: 60, wake_s: 1, off_w: 1}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: yaml: unmarshal errors"}, // the next line: "line 8: field power_dwn not found" (TestVariantsValidate),
	{name: "variant overrides a field no variant has", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - name: x\n    trace: {pods: other}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: yaml: unmarshal errors"},
	{name: "duplicate variant names", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n  - {name: x, pue: 1.4}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: invalid scenario"},
	{name: "variant pue out of range", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 7}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "invalid scenario"},
	{name: "variant that overrides nothing", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "invalid scenario"},
	{name: "variant catalog file missing", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, catalog: nope.yaml}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "variants[0] (x): catalog"},
	{name: "variant power limit below idle", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, power_limit: {watts: 1}}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "variants[0] (x): power_limit: 1 W is below"},
	{name: "variants in run", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 2, errLine: "use compare"},
	{name: "--equivalence 0", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--equivalence", "0"}, code: 2, errLine: `--equivalence "0": want a percentage`},
	{name: "--equivalence 51%", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--equivalence", "51%"}, code: 2, errLine: "in (0, 50]"},
	{name: "--equivalence NaN", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--equivalence", "NaN"}, code: 2, errLine: "--equivalence"},
	{name: "--equivalence negative", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--equivalence", "-1"}, code: 2, errLine: "--equivalence"},
	{name: "--equivalence 50% allowed", files: map[string]string{"s.yaml": fmt.Sprintf(variantsScenario, "  - {name: x, pue: 1.2}\n"), "pods.csv": variantsPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--equivalence", "50%"}, code: 0, stdout: "results in"},
	{name: "unknown GPU model in compare", files: map[string]string{"s.yaml": "name: u\nmode: replay\ntrace: {pods: ./pods.csv, nodes: ./nodes.csv}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n",
		"pods.csv": variantsPod, "nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,NoSuchGPU\n"},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: `unknown GPU model "NoSuchGPU"`},
}
