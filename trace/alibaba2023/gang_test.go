package alibaba2023

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const gangHead = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size\n"

// The gang and gang_size columns: pods with a gang carry its name and
// size, the others neither; WritePods writes them back.
func TestReadPodsGang(t *testing.T) {
	in := gangHead +
		"w0,1000,1,8,1000,,,,0,100,0,,,job1,2\n" +
		"w1,1000,1,8,1000,,,,0,100,0,,,job1,2\n" +
		"solo,1000,1,1,1000,,,,5,10,5,,,,\n"
	pods, err := ReadPods(strings.NewReader(in), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	type g struct {
		Name, Gang string
		Size       int
	}
	var got []g
	for _, p := range pods {
		got = append(got, g{p.Name, p.Gang, p.GangSize})
	}
	want := []g{{"w0", "job1", 2}, {"w1", "job1", 2}, {"solo", "", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gangs (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := WritePods(&buf, pods); err != nil {
		t.Fatal(err)
	}
	back, err := ReadPods(&buf, "back.csv")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pods, back); diff != "" {
		t.Errorf("written and read back (-want +got):\n%s", diff)
	}
	x2, err := RepeatPods(pods, 2)
	if err != nil {
		t.Fatal(err)
	}
	if x2[0].Gang != "job1" || x2[3].Name != "w0-x1" || x2[3].Gang != "job1-x1" || x2[5].Gang != "" {
		t.Errorf("repeated: %s in %q, %s in %q, %s in %q: want each copy its own gang", x2[0].Name, x2[0].Gang, x2[3].Name, x2[3].Gang, x2[5].Name, x2[5].Gang)
	}
}

func TestReadPodsGangErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"sizes disagree": {gangHead + "w0,1,1,1,1000,,,,0,1,0,,,j,2\nw1,1,1,1,1000,,,,0,1,0,,,j,3\n", "pods.csv:3: column gang_size: gang j: pod w0 says gang_size 2, pod w1 says 3"},
		"pods missing":   {gangHead + "w0,1,1,1,1000,,,,0,1,0,,,j,3\nw1,1,1,1,1000,,,,0,1,0,,,j,3\n", "pods.csv:2: column gang_size: gang j: gang_size 3 but 2 pods"},
		"size alone":     {gangHead + "w0,1,1,1,1000,,,,0,1,0,,,,2\n", "pods.csv:2: column gang_size: \"2\" for a pod without a gang"},
		"size zero":      {gangHead + "w0,1,1,1,1000,,,,0,1,0,,,j,0\n", "pods.csv:2: column gang_size: 0 out of range"},
		"no size column": {strings.TrimSuffix(gangHead, ",gang_size\n") + "\nw0,1,1,1,1000,,,,0,1,0,,,j\n", "pods.csv:2: column gang: a gang needs the gang_size column"},
		"pod too big":    {gangHead + "big,1,1,16,1000,,,,0,1,0,,,,\n", "pods.csv:2: column num_gpu: pod \"big\" asks for 16 GPUs"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadPods(strings.NewReader(tc.in), "pods.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
