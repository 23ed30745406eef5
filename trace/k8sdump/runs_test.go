package k8sdump

import (
	"strings"
	"testing"
	"time"
)

// A pods dump: on node a, a quarter of GPU 1 (ended), half of GPU 1 and
// two whole GPUs 2,3 (running); on node b a whole GPU without
// gpu-index; a pending pod, a CPU pod on node c, an unbound pod.
const podsDump = `{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Pod", "metadata": {"name": "q", "namespace": "ml", "creationTimestamp": "2026-11-20T09:59:00Z",
   "annotations": {"wattsched.io/gpu-milli": "250", "wattsched.io/gpu-index": "1"}},
  "spec": {"nodeName": "a", "containers": [{}]},
  "status": {"phase": "Succeeded", "startTime": "2026-11-20T10:00:00Z",
   "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-20T10:05:00Z"}}},
                         {"state": {"terminated": {"finishedAt": "2026-11-20T10:10:00Z"}}}]}},
 {"kind": "Pod", "metadata": {"name": "h", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z",
   "annotations": {"wattsched.io/gpu-milli": "500", "wattsched.io/gpu-index": " 1"}},
  "spec": {"nodeName": "a", "containers": [{}]},
  "status": {"phase": "Running", "startTime": "2026-11-20T10:02:00Z"}},
 {"kind": "Pod", "metadata": {"name": "w", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z",
   "annotations": {"wattsched.io/gpu-index": "3,2"}},
  "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}}]},
  "status": {"phase": "Running", "startTime": "2026-11-20T10:00:00Z"}},
 {"kind": "Pod", "metadata": {"name": "x", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z"},
  "spec": {"nodeName": "b", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "1"}}}]},
  "status": {"phase": "Running", "startTime": "2026-11-20T10:20:00Z"}},
 {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z",
   "annotations": {"wattsched.io/gpu-milli": "500"}},
  "spec": {"nodeName": "b", "containers": [{}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "cpu", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z"},
  "spec": {"nodeName": "c", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Running", "startTime": "2026-11-20T10:00:00Z"}},
 {"kind": "Pod", "metadata": {"name": "u", "namespace": "ml", "creationTimestamp": "2026-11-20T10:01:00Z",
   "annotations": {"wattsched.io/gpu-milli": "500"}}, "spec": {"containers": [{}]}, "status": {"phase": "Pending"}}
]}`

func TestRunsShare(t *testing.T) {
	rs, err := ReadRuns(strings.NewReader(podsDump), "pods.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rs.Nodes(), ","); got != "a,b,c" {
		t.Errorf("nodes %s, want a,b,c", got)
	}
	if len(rs.Runs) != 4 {
		t.Fatalf("runs %+v, want q, h, w on a and x on b", rs.Runs)
	}
	at := func(hms string) time.Time {
		v, err := time.Parse(time.RFC3339, "2026-11-20T"+hms+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		node string
		gpu  int
		at   string
		want float64
		ok   bool
	}{
		{"a", 1, "09:59:59", 0, true},    // before q started
		{"a", 1, "10:00:00", 0.25, true}, // q from its start
		{"a", 1, "10:02:00", 0.75, true}, // q 250 + h 500
		{"a", 1, "10:10:00", 0.75, true}, // q's latest container ends at 10:10: still counted
		{"a", 1, "10:10:01", 0.5, true},  // h alone
		{"a", 0, "10:03:00", 0, true},    // nothing on GPU 0
		{"a", 2, "10:03:00", 1, true},    // w's whole GPUs
		{"a", 3, "23:00:00", 1, true},    // w still runs
		{"b", 0, "10:19:59", 0, true},    // p is pending: not counted; x not started
		{"b", 0, "10:20:00", 0, false},   // x runs, its GPU unknown
		{"c", 0, "10:20:00", 0, true},    // a CPU pod's node is known, its GPUs idle
		{"d", 0, "10:20:00", 0, false},   // not in the dump
	}
	for _, c := range cases {
		got, ok := rs.Share(c.node, c.gpu, at(c.at))
		if got != c.want || ok != c.ok {
			t.Errorf("Share(%s, %d, %s) = %v, %v; want %v, %v", c.node, c.gpu, c.at, got, ok, c.want, c.ok)
		}
	}
}

// Two halves and a quarter on one GPU are capped at the whole GPU.
func TestRunsShareCapped(t *testing.T) {
	pod := func(name, milli string) string {
		return `{"kind": "Pod", "metadata": {"name": "` + name + `", "creationTimestamp": "2026-11-20T10:00:00Z",
		 "annotations": {"wattsched.io/gpu-milli": "` + milli + `", "wattsched.io/gpu-index": "0"}},
		 "spec": {"nodeName": "a"}, "status": {"phase": "Running", "startTime": "2026-11-20T10:00:00Z"}}`
	}
	rs, err := ReadRuns(strings.NewReader(`{"items": [`+pod("x", "500")+","+pod("y", "500")+","+pod("z", "250")+`]}`), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rs.Share("a", 0, time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)); got != 1 || !ok {
		t.Errorf("share %v %v, want 1 (1.25 capped)", got, ok)
	}
}

// Bad pods name the file, the item and the field.
func TestReadRunsErrors(t *testing.T) {
	pod := func(ann, status string) string {
		return `{"items": [{"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-11-20T10:00:00Z", "annotations": {` + ann + `}},
		 "spec": {"nodeName": "a", "containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}}]}, "status": ` + status + `}]}`
	}
	running := `{"phase": "Running", "startTime": "2026-11-20T10:00:00Z"}`
	for _, c := range []struct{ in, want string }{
		{pod(``, `{"phase": "Running", "startTime": "10 o'clock"}`), `p.json: items[0].status.startTime: "10 o'clock" is not RFC 3339`},
		{pod(``, `{"phase": "Running"}`), `items[0].status.startTime: missing on a Running pod`},
		{pod(``, `{"phase": "Failed", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "x"}}}]}`), `items[0].status.containerStatuses[0].state.terminated.finishedAt: "x"`},
		{pod(``, `{"phase": "Failed", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-20T09:00:00Z"}}}]}`), `finished 2026-11-20T09:00:00Z before it started`},
		{pod(`"wattsched.io/gpu-index": "0,x"`, running), `items[0].metadata.annotations["wattsched.io/gpu-index"]: "0,x": want comma-separated GPU indices 0..63`},
		{pod(`"wattsched.io/gpu-index": "0"`, running), `"0": 1 indices for a pod of 2 GPU(s)`},
		{pod(`"wattsched.io/gpu-index": "1,1"`, running), `GPU 1 twice`},
		{pod(`"wattsched.io/gpu-index": "64,1"`, running), `want comma-separated`},
		{`{"items": [{"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-11-20T10:00:00Z"}}]}`, "no Node items and no pod bound"},
		{`[`, "p.json:"},
		// Issue 40: times outside 1970..2100 and fractions of a GPU.
		{pod(``, `{"phase": "Running", "startTime": "0001-01-01T00:00:00Z"}`), `items[0].status.startTime: "0001-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z`},
		{pod(``, `{"phase": "Failed", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "9999-01-01T00:00:00Z"}}}]}`), `items[0].status.containerStatuses[0].state.terminated.finishedAt: "9999-01-01T00:00:00Z" is not after 1970`},
		{strings.Replace(pod(``, running), `"nvidia.com/gpu": "2"`, `"nvidia.com/gpu": "500m"`, 1), `items[0].spec.containers[0].resources.requests.nvidia.com/gpu: "500m" is not a whole number`},
	} {
		if _, err := ReadRuns(strings.NewReader(c.in), "p.json"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n%v, want %q", c.in, err, c.want)
		}
	}
	// An ended pod whose end the kubelet never saw (no container with a
	// finishedAt; null as the kubelet writes ContainerStatusUnknown) is
	// no error: its node's shares are unknown from its start on.
	for _, st := range []string{`{"phase": "Succeeded", "startTime": "2026-11-20T10:00:00Z"}`,
		`{"phase": "Failed", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"reason": "ContainerStatusUnknown", "exitCode": 137, "finishedAt": null}}}]}`} {
		rs, err := ReadRuns(strings.NewReader(pod(`"wattsched.io/gpu-index": "0,1"`, st)), "p.json")
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if _, ok := rs.Share("a", 0, time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)); !ok {
			t.Errorf("%s: share before the start unknown", st)
		}
		if _, ok := rs.Share("a", 0, time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)); ok {
			t.Errorf("%s: share after the start known, want unknown (the end is)", st)
		}
	}
	// A Failed pod refused before it started is no run and no error.
	if rs, err := ReadRuns(strings.NewReader(pod(``, `{"phase": "Failed"}`)), "p.json"); err != nil || len(rs.Runs) != 0 || !rs.HasNode("a") {
		t.Errorf("failed pod without start: %v %+v", err, rs)
	}
}

// naiveShare is Share by its definition, scanning every run: the
// segments must agree with it.
func naiveShare(rs *Runs, node string, gpu int, at time.Time) (float64, bool) {
	if !rs.HasNode(node) {
		return 0, false
	}
	var milli int64
	for _, r := range rs.Runs {
		if r.Node != node || r.Start.After(at) || (!r.End.IsZero() && r.End.Before(at)) {
			continue
		}
		if r.GPUs == nil {
			return 0, false
		}
		for _, g := range r.GPUs {
			if g == gpu {
				milli += r.Milli
			}
		}
	}
	return min(float64(milli)/1000, 1), true
}

// checkSegments compares Share with naiveShare at every run's start and
// end, a nanosecond either side, on GPUs 0..3.
func checkSegments(t *testing.T, rs *Runs) {
	t.Helper()
	for _, r := range rs.Runs {
		for _, at := range []time.Time{r.Start, r.End} {
			for _, d := range []time.Duration{-1, 0, 1} {
				for g := 0; g < 4; g++ {
					s1, ok1 := rs.Share(r.Node, g, at.Add(d))
					s2, ok2 := naiveShare(rs, r.Node, g, at.Add(d))
					if s1 != s2 || ok1 != ok2 {
						t.Fatalf("Share(%s, %d, %v) = %v %v, by definition %v %v", r.Node, g, at.Add(d), s1, ok1, s2, ok2)
					}
				}
			}
		}
	}
}

func TestRunsSegments(t *testing.T) {
	rs, err := ReadRuns(strings.NewReader(podsDump), "pods.json")
	if err != nil {
		t.Fatal(err)
	}
	checkSegments(t, rs)
}

func FuzzReadRuns(f *testing.F) {
	f.Add(podsDump)
	f.Add(dump)
	f.Add(`{"items": [{"kind": "Pod", "metadata": {"creationTimestamp": "2026-11-20T10:00:00Z", "annotations": {"wattsched.io/gpu-milli": "5", "wattsched.io/gpu-index": "0"}}, "spec": {"nodeName": "a"}, "status": {"phase": "Failed", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-20T10:00:00Z"}}}]}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ReadRuns(strings.NewReader(in), "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkSegments(t, rs)
		for _, r := range rs.Runs {
			if !rs.HasNode(r.Node) || r.Milli < 1 || r.Milli > 1000 || (!r.End.IsZero() && r.End.Before(r.Start)) || (r.GPUs != nil && len(r.GPUs) == 0) {
				t.Fatalf("accepted run %+v", r)
			}
			for _, g := range r.GPUs {
				if s, ok := rs.Share(r.Node, g, r.Start); ok && (s <= 0 || s > 1) {
					t.Fatalf("share %v of run %+v at its start", s, r)
				}
			}
		}
	})
}
