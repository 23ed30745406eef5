package alibaba2023

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const migHead = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size,mig_profile\n"

// The mig_profile column: a pod asks for one MIG instance; the reader
// fills in its share (compute slices x 1000 / 7, rounded down) when
// gpu_milli is 0, and WritePods writes the column back.
func TestReadPodsMIG(t *testing.T) {
	in := migHead +
		"m3,1000,1,1,0,A100,,,0,100,0,,,,,3g.40gb\n" + // 3 x 1000 / 7 = 428
		"m1,1000,1,1,142,G3,,,0,100,0,,,,,1g.10gb\n" + // G3 is an alias of A100; 1000/7 = 142
		"any,1000,1,1,0,,,,0,100,0,,,,,7g.80gb\n" + // 7 x 1000 / 7
		"share,1000,1,1,500,,,,5,10,5,,,,,\n"
	pods, err := ReadPods(strings.NewReader(in), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	type m struct {
		Name, Profile string
		Milli         int64
	}
	var got []m
	for _, p := range pods {
		got = append(got, m{p.Name, p.MIGProfile, p.GPUMilli})
	}
	want := []m{{"m3", "3g.40gb", 428}, {"m1", "1g.10gb", 142}, {"any", "7g.80gb", 1000}, {"share", "", 500}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MIG pods (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := WritePods(&buf, pods); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), migHead) {
		t.Errorf("written header %q, want the mig_profile column", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	back, err := ReadPods(&buf, "back.csv")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pods, back); diff != "" {
		t.Errorf("written and read back (-want +got):\n%s", diff)
	}
	// A list without MIG pods keeps its narrower header.
	buf.Reset()
	if err := WritePods(&buf, pods[3:]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "mig_profile") {
		t.Errorf("a list without MIG pods was written with mig_profile: %q", buf.String())
	}
}

// A profile the accepted GPU models do not have is an error naming the
// file, line, column and pod.
func TestReadPodsMIGErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"40 GB profile on the 80 GB A100": {migHead + "p,1,1,1,0,A100,,,0,1,0,,,,,3g.20gb\n",
			`pods.csv:2: column mig_profile: pod "p": MIG profile "3g.20gb": none of the accepted GPU models (A100) has it`},
		"model without MIG": {migHead + "p,1,1,1,0,V100M16,,,0,1,0,,,,,1g.10gb\n",
			`pods.csv:2: column mig_profile: pod "p": MIG profile "1g.10gb": none of the accepted GPU models (V100M16) has MIG`},
		"no such profile": {migHead + "p,1,1,1,0,,,,0,1,0,,,,,9g.90gb\n",
			`pods.csv:2: column mig_profile: pod "p": MIG profile "9g.90gb": no MIG GPU has it`},
		"two instances": {migHead + "p,1,1,2,1000,A100,,,0,1,0,,,,,7g.80gb\n",
			`pods.csv:2: column num_gpu: pod "p": 2 GPUs with mig_profile 7g.80gb`},
		"share disagrees": {migHead + "p,1,1,1,500,A100,,,0,1,0,,,,,3g.40gb\n",
			`pods.csv:2: column gpu_milli: pod "p": 500 with mig_profile 3g.40gb, whose share is 428`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadPods(strings.NewReader(tc.in), "pods.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
