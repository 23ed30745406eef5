package alibaba2023

import (
	"strings"
	"testing"
)

// qos, pod_phase and scheduled_time are read, not used, and checked: an
// unknown value, or a scheduled time before the pod's creation, is an error
// naming file, line and column (issue 40: accepted silently). Every value
// of the public openb lists, Kubernetes' own and empty stay accepted.
func TestReadPodsColumns(t *testing.T) {
	head := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	ok := head + "a,1000,1024,1,500,,LS,Running,10,20,10\nb,1000,1024,1,500,,BE,Pending,10,20,\n" +
		"c,1000,1024,1,500,,Burstable,Succeeded,10,20,30\nd,1000,1024,1,500,,Guaranteed,Failed,10,20,15\n" +
		"e,1000,1024,1,500,,BestEffort,Unknown,10,20,\nf,1000,1024,1,500,,,,10,20,\n"
	if pods, err := ReadPods(strings.NewReader(ok), "p.csv"); err != nil || len(pods) != 6 {
		t.Fatalf("known values: %d pods, %v", len(pods), err)
	}
	for _, c := range []struct{ row, want string }{
		{"a,1000,1024,1,500,,Gold,Running,10,20,10", "p.csv:2: column qos: \"Gold\", want one of LS, BE, Burstable, Guaranteed, BestEffort or empty"},
		{"a,1000,1024,1,500,,LS,Sleeping,10,20,10", "p.csv:2: column pod_phase: \"Sleeping\", want one of Pending, Running, Succeeded, Failed, Unknown or empty"},
		{"a,1000,1024,1,500,,LS,Running,10,20,9", "p.csv:2: column scheduled_time: 9 before creation_time 10"},
	} {
		if _, err := ReadPods(strings.NewReader(head+c.row+"\n"), "p.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.row, err, c.want)
		}
	}
}
