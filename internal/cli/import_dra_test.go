package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// draDump is a cluster whose GPUs come through NVIDIA's DRA driver
// (ResourceSlices, DeviceClasses, ResourceClaims and templates).
const draDump = "../../trace/k8sdump/testdata/dra.json"

// import k8s reads a DRA cluster: nodes' GPUs from the ResourceSlices,
// pods' GPUs from their claims (a shared claim as shares, one MIG device
// as a request for one instance, the MIG node in MIG mode), a claim of an
// unknown DeviceClass and a claim shared across nodes as warnings, which
// --strict makes the error with nothing written; the scenario replays.
func TestImportK8sDRA(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "imp")
	code, stdout, stderr := run(t, "import", "k8s", "-f", draDump, "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"4 nodes and 11 pods from", "1 pods skipped",
		"NVIDIA-A100-SXM4-80GB  2      4     1         yes (A100)", "NVIDIA-H100-80GB-HBM3  1      8     0         yes (H100)",
		"a100-mig-0  dra       3 x 1g.10gb, 2 x 2g.20gb, 1 x 3g.40gb, 1 x 4g.40gb  2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{`warning: skipped items[27] pod ml/fpga-job: spec.resourceClaims[0]: ResourceClaim ml/fpga (items[17])`,
		"warning: items[18] ResourceClaim ml/shared-h100: shared by pods on different nodes"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	pods, err := os.ReadFile(filepath.Join(out, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// One MIG device: a request for one instance of its profile.
	for _, want := range []string{"ml/train-0,32000,262144,2,1000,NVIDIA-H100-80GB-HBM3,", "ml/infer-a,4000,16384,1,500,,", "ml/ft-0,4000,16384,1,571,,,Running,360,660,420,,,,,4g.40gb\n"} {
		if !strings.Contains(string(pods), want) {
			t.Errorf("pods.csv lacks %q:\n%s", want, pods)
		}
	}
	// The MIG node in MIG mode, its GPUs laid out where the driver put the
	// devices.
	sc, err := os.ReadFile(filepath.Join(out, "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `      - [{profile: "2g.20gb", start: 0}, {profile: "1g.10gb", start: 2}, {profile: "1g.10gb", start: 3}, {profile: "2g.20gb", start: 4}, {profile: "1g.10gb", start: 6}]`; !strings.Contains(string(sc), want) {
		t.Errorf("scenario.yaml lacks %q:\n%s", want, sc)
	}
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "scenario.yaml"), "-o", filepath.Join(dir, "run")); code != 0 {
		t.Errorf("the imported scenario does not run: exit %d %s", code, errs)
	}
	strict := filepath.Join(dir, "strict")
	code, _, stderr = run(t, "import", "k8s", "--strict", "-f", draDump, "-o", strict)
	if code == 0 || !strings.Contains(stderr, `dra.json: items[17].spec.devices.requests[0].exactly.deviceClassName: DeviceClass "fpga.example.com" is not in the dump`) {
		t.Errorf("--strict: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(strict); !os.IsNotExist(err) {
		t.Errorf("--strict wrote %s: %v", strict, err)
	}
}
