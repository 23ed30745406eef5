package k8sdump

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// MIG pods become profile requests, not shares: one device of a profile
// of the node's GPU (mixed strategy: nvidia.com/mig-<profile>; single
// strategy: nvidia.com/gpu on a node labelled with the profile), or of
// any MIG GPU for a pod not yet bound; a profile the node's GPU lacks is
// a counted warning (the pod skipped), and with --strict an error naming
// the file, item and field.
func TestReadMIGPods(t *testing.T) {
	read := func(strict bool) (*Dump, error) {
		f, err := os.Open("testdata/mig.json")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return ReadWith(f, "mig.json", Options{Strict: strict})
	}
	d, err := read(false)
	if err != nil {
		t.Fatal(err)
	}
	type mp struct {
		Name, Profile string
		Milli         int64
	}
	var got []mp
	for _, p := range d.Pods {
		got = append(got, mp{p.Name, p.Demand.MIGProfile, p.Demand.GPUMilli})
	}
	// 3g: 3 x 1000 / 7 = 428; 1g: 142.
	want := []mp{{"ml/infer-3g", "3g.40gb", 428}, {"ml/infer-1g", "1g.10gb", 142}, {"ml/single-3g", "3g.40gb", 428}, {"ml/whole", "", 1000}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	wantSkipped := []Skipped{{Item: "items[6]", Pod: "ml/wrong-profile", Reason: "spec.containers[].resources.requests.nvidia.com/mig-3g.20gb: MIG profile 3g.20gb is not one of A100-SXM4-80GB's (1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb; hw/mig.yaml), the GPUs of node a100-mig"}}
	if diff := cmp.Diff(wantSkipped, d.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	files := d.Files("mig.json", nil)
	pods := string(files["pods.csv"])
	for _, line := range []string{"ml/infer-3g,2000,8192,1,428,,,Succeeded,0,1800,10,,,,,3g.40gb\n", "ml/whole,4000,16384,1,1000,,,Succeeded,1200,3600,1200,,,,,\n"} {
		if !strings.Contains(pods, line) {
			t.Errorf("pods.csv lacks %q:\n%s", line, pods)
		}
	}
	// Both MIG nodes in MIG mode with their layouts: a100-mig's 2 x 3g
	// and 2 x 1g laid out over its 2 GPUs (largest first: both 3g on GPU
	// 0), h100-mig cut into 3g.40gb at 0 and 4.
	sc := string(files["scenario.yaml"])
	wantMIG := `mig:
  - nodes: ["a100-mig"]
    layouts:
      - [{profile: "3g.40gb", start: 0}, {profile: "3g.40gb", start: 4}]
      - [{profile: "1g.10gb", start: 0}, {profile: "1g.10gb", start: 1}]
  - nodes: ["h100-mig"]
    layouts:
      - [{profile: "3g.40gb", start: 0}, {profile: "3g.40gb", start: 4}]
`
	if !strings.Contains(sc, wantMIG) {
		t.Errorf("scenario.yaml lacks\n%s\nin:\n%s", wantMIG, sc)
	}
	if _, err := read(true); err == nil || !strings.Contains(err.Error(), "mig.json: items[6].spec.containers[].resources.requests.nvidia.com/mig-3g.20gb: MIG profile 3g.20gb is not one of A100-SXM4-80GB's") {
		t.Errorf("--strict: error %v, want one naming the file, item, field and profile", err)
	}
}
