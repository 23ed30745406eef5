package tasks_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
)

// A replay under a binding rack limit: four 1-GPU nodes, racks r1 {n1, n2}
// and r2 {n3, n4} under row w; eight 1-GPU pods arrive at 0 s and run
// 600 s. r1's limit holds its idle power and one pod's increase (plus
// 1 W), so r1 runs one pod at a time: pods wait, r1's recorded peak never
// passes its limit, explain.csv names r1 for the node it refused, and
// summary.json and domains.csv report every domain. w's limit (below
// r1's + r2's) is printed as one counted warning.
func TestReplayRackLimit(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,V100M32\nn2,64000,262144,1,V100M32\nn3,64000,262144,1,V100M32\nn4,64000,262144,1,V100M32\n"
	pods := checkPodsHead
	for i := range 8 {
		pods += fmt.Sprintf("p%d,1000,1024,1,1000,,LS,Running,0,600,0\n", i)
	}
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "x", CPUMilli: 64000, MemMiB: 262144, GPUs: 1, GPUModel: "V100M32"}})
	if err != nil {
		t.Fatal(err)
	}
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	inc := power.Increase(power.PWR{}, c.Nodes[0], &job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}, []int{0})
	r1 := 2*idle + inc + 1
	files := map[string]string{
		"s.yaml": fmt.Sprintf(`name: racks
mode: replay
trace: {nodes: nodes.csv, pods: pods.csv}
policies:
  - name: FGD
    scorers: [{policy: fgd, weight: 1000}]
topology:
  members: {n1: r1, n2: r1, n3: r2, n4: r2}
  domains:
    - {name: w, level: row, limit_w: %.3f}
    - {name: r1, level: rack, parent: w, limit_w: %.3f}
    - {name: r2, level: rack, parent: w, limit_w: 100000}
`, 4*idle+4*inc, r1),
		"nodes.csv": nodes,
		"pods.csv":  pods,
	}
	s := writeScenario(t, files)
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	env := testEnv()
	env.ExplainDecisions = 100
	env.Note = func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }
	runs, err := tasks.RunReplay(env, s, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], `warning (topology, 1 of 1): line 10: topology: domain "w": its children's limits add up to`) {
		t.Errorf("notes %q, want one counted warning on w's line", notes)
	}
	res, err := tasks.ReplayResults("test", s, in, runs)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []tasks.ReplaySummary `json:"policies"`
	}
	if err := json.Unmarshal(res.Files["summary.json"], &sum); err != nil {
		t.Fatal(err)
	}
	x := sum.Policies[0]
	if len(x.Domains) != 3 || x.Domains[1].Name != "r1" {
		t.Fatalf("summary.json domains %+v, want w, r1, r2", x.Domains)
	}
	d := x.Domains[1]
	// r1 runs one pod at a time: its peak is its idle power plus one pod's.
	if !power.Limit(d.LimitW).AllowsRecomputed(hw.Watts(d.PeakW)) || math.Abs(float64(d.PeakW)-float64(2*idle+inc)) > 1e-6 {
		t.Errorf("r1 peak %v W, want its idle power and one pod's increase, %v W, within its %v W limit", d.PeakW, 2*idle+inc, d.LimitW)
	}
	if !(x.MeanWaitS > 0) {
		t.Errorf("mean wait %v s: the rack limit must make pods wait", x.MeanWaitS)
	}
	csv := string(res.Files[tasks.DomainsFile])
	if !strings.HasPrefix(csv, "policy,domain,level,limit_w,nodes,mean_w,p50_w,p99_w,peak_w,above_threshold,above_s,above_share\n") || strings.Count(csv, "\n") != 4 {
		t.Errorf("domains.csv:\n%s", csv)
	}
	if xc := string(res.Files[tasks.ExplainFile]); !strings.Contains(xc, `power domain ""r1"" (rack, limit`) {
		t.Errorf("explain.csv does not name r1:\n%s", xc)
	}
}

// A pod that no rack could take even with the cluster idle is found by
// the checks before the run (never_start, over the power limit), naming
// the rack, and is never started: one V100 node whose rack's limit is 1 W
// short of its idle power plus the pod's increase.
func TestNeverStartRack(t *testing.T) {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "n1", CPUMilli: 64000, MemMiB: 262144, GPUs: 1, GPUModel: "V100M32"}})
	if err != nil {
		t.Fatal(err)
	}
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	inc := power.Increase(power.PWR{}, c.Nodes[0], &job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}, []int{0})
	s := writeScenario(t, map[string]string{
		"s.yaml": fmt.Sprintf("name: r\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n"+
			"topology:\n  members: {n1: r}\n  domains: [{name: r, level: rack, limit_w: %.3f}]\n", idle+inc-1),
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,V100M32\n",
		"pods.csv":  checkPodsHead + "big,1000,1024,1,1000,,LS,Running,0,60,0\nsmall,1000,1024,0,0,,LS,Running,0,60,0\n",
	})
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := tasks.RunReplay(testEnv(), s, in)
	if err != nil {
		t.Fatal(err)
	}
	ns := in.NeverStart
	if ns == nil || ns.Count != 1 || ns.OverLimit != 1 || !strings.Contains(ns.Why, `big: power budget: even on an idle cluster the pod would take power domain "r"`) {
		t.Errorf("never_start %+v, want big over rack r's limit", ns)
	}
	if r := runs[0].Result.Tasks; r[0].Start >= 0 || r[1].Start < 0 {
		t.Errorf("tasks %+v: want big never started, small started", r)
	}
}

// compare reports each setting's domains: the mean over seeds of each
// figure but the highest peak, one domains.csv row per seed and domain,
// and nothing for a variant without a topology. Two 1-GPU nodes in rack r
// (its limit: idle + one pod + 1 W), four 600 s pods at 0 s, two seeds.
func TestCompareDomains(t *testing.T) {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "x", CPUMilli: 64000, MemMiB: 262144, GPUs: 1, GPUModel: "V100M32"}})
	if err != nil {
		t.Fatal(err)
	}
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	inc := power.Increase(power.PWR{}, c.Nodes[0], &job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}, []int{0})
	pods := checkPodsHead
	for i := range 4 {
		pods += fmt.Sprintf("p%d,1000,1024,1,1000,,LS,Running,0,600,0\n", i)
	}
	s := writeScenario(t, map[string]string{
		"s.yaml": fmt.Sprintf("name: c\nmode: replay\nseeds: 2\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n"+
			"topology:\n  members: {n1: r, n2: r}\n  domains: [{name: r, level: rack, limit_w: %.3f}]\nvariants:\n  - {name: open, no_topology: true}\n", 2*idle+inc+1),
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,V100M32\nn2,64000,262144,1,V100M32\n",
		"pods.csv":  pods,
	})
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv()
	runs, err := tasks.RunCompare(env, s, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tasks.CompareResults("test", env, s, in, runs, tasks.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []tasks.CompareSummary `json:"policies"`
	}
	if err := json.Unmarshal(res.Files["summary.json"], &sum); err != nil {
		t.Fatal(err)
	}
	got := map[string][]tasks.DomainReport{}
	for _, p := range sum.Policies {
		got[p.Variant] = p.Domains
	}
	// As configured: one pod at a time in r, 4 x 600 s = 2400 s, r at
	// idle + inc throughout (p50 = peak).
	d := got["as configured"]
	if len(d) != 1 || math.Abs(float64(d[0].PeakW)-float64(2*idle+inc)) > 1e-6 || math.Abs(float64(d[0].P50W)-float64(2*idle+inc)) > 1e-6 {
		t.Errorf("as configured: domains %+v, want r at %v W", d, 2*idle+inc)
	}
	if len(got["open"]) != 0 {
		t.Errorf("variant without topology: domains %+v, want none", got["open"])
	}
	// Rows: as configured and the automatic power-down variant (which
	// keeps the topology) for each of the 2 seeds; none for open.
	if csv := string(res.Files[tasks.DomainsFile]); strings.Count(csv, "\n") != 1+2*2 || strings.Contains(csv, ",open,") {
		t.Errorf("domains.csv: want a header and one row per seed of each setting with a topology:\n%s", csv)
	}
}

// node_column: the node list's rack column places each node, members
// override it node by node, and the replay's racks are as the column says;
// a value naming no domain is an error at its line of the node list, and
// the embedded node lists, which have no such column, are refused.
func TestTopologyNodeColumn(t *testing.T) {
	nodes := "sn,cpu_milli,memory_mib,gpu,model,rack\nn1,64000,262144,1,V100M32,r1\nn2,64000,262144,1,V100M32,r1\nn3,64000,262144,1,V100M32,r2\nn4,64000,262144,1,V100M32,r1\n"
	head := "name: col\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n"
	topo := "topology:\n  node_column: rack\n  members: {n4: r2}\n  domains:\n    - {name: r1, level: rack, limit_w: 100000}\n    - {name: r2, level: rack, limit_w: 100000}\n"
	pods := checkPodsHead + "p0,1000,1024,1,1000,,LS,Running,0,600,0\n"
	s := writeScenario(t, map[string]string{"s.yaml": head + topo, "nodes.csv": nodes, "pods.csv": pods})
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	_, sum := replaySummary(t, s, in)
	// n1, n2 in r1 by the column; n3 in r2; n4 in r2 by members over its column's r1.
	if d := sum[0].Domains; len(d) != 2 || d[0].Nodes != 2 || d[1].Nodes != 2 {
		t.Fatalf("domains %+v, want r1 and r2 with 2 nodes each", d)
	}
	bad := strings.Replace(nodes, "n3,64000,262144,1,V100M32,r2", "n3,64000,262144,1,V100M32,r9", 1)
	s = writeScenario(t, map[string]string{"s.yaml": head + topo, "nodes.csv": bad, "pods.csv": pods})
	in, err = tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.RunReplay(testEnv(), s, in); err == nil || !strings.Contains(err.Error(), `nodes.csv line 4: column rack: "r9" is not a domain of the topology`) {
		t.Errorf("undeclared domain in the column: %v", err)
	}
	s = writeScenario(t, map[string]string{"s.yaml": strings.Replace(head, "nodes: nodes.csv, ", "", 1) + topo, "pods.csv": pods})
	if _, err := tasks.LoadInputs(s); err == nil || !strings.Contains(err.Error(), `topology.node_column: "rack": the embedded node list`) {
		t.Errorf("node_column over the embedded nodes: %v", err)
	}
	s = writeScenario(t, map[string]string{"s.yaml": head + topo, "nodes.csv": strings.Replace(nodes, ",rack\n", ",row\n", 1), "pods.csv": pods})
	if _, err := tasks.LoadInputs(s); err == nil || !strings.Contains(err.Error(), `header "row", want one of [rack]`) {
		t.Errorf("node list without the column: %v", err)
	}
}

// Gangs under power domains, packed by rack (gangs.group_by: domain):
// four 2-GPU V100 nodes in racks r1 (n1, n2; its limit holds one pod
// beside its idle power) and r2 (n3, n4). Gang g (2 pods of 2 GPUs) cannot
// sit in r1 (power), so it is packed in r2; gang h, arriving at the same
// time, fits no rack alone and not over the cluster either (r1 holds one
// of its pods, r2 is full), so it waits whole until g ends, then is packed
// in r2. No rack passes its limit, and every gang starts whole.
func TestGangsInRacks(t *testing.T) {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "x", CPUMilli: 64000, MemMiB: 262144, GPUs: 2, GPUModel: "V100M32"}})
	if err != nil {
		t.Fatal(err)
	}
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	inc := power.Increase(power.PWR{}, c.Nodes[0], &job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 2, GPUMilli: 1000}, []int{0, 1})
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size\n" +
		"g0,1000,1024,2,1000,,LS,Running,0,600,0,,,g,2\ng1,1000,1024,2,1000,,LS,Running,0,600,0,,,g,2\n" +
		"h0,1000,1024,2,1000,,LS,Running,1,601,1,,,h,2\nh1,1000,1024,2,1000,,LS,Running,1,601,1,,,h,2\n"
	s := writeScenario(t, map[string]string{
		"s.yaml": fmt.Sprintf("name: g\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\ngangs: {group_by: domain}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n"+
			"topology:\n  members: {n1: r1, n2: r1, n3: r2, n4: r2}\n  domains:\n    - {name: r1, level: rack, limit_w: %.3f}\n    - {name: r2, level: rack, limit_w: 100000}\n", 2*idle+inc+1),
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,2,V100M32\nn2,64000,262144,2,V100M32\nn3,64000,262144,2,V100M32\nn4,64000,262144,2,V100M32\n",
		"pods.csv":  pods,
	})
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	runs, sum := replaySummary(t, s, in)
	r := runs[0].Result
	node := map[string]string{}
	for _, x := range r.Tasks {
		node[in.Pods[x.ID].Name] = fmt.Sprint(x.Node)
	}
	rackOf := func(p string) string {
		if node[p] == "0" || node[p] == "1" {
			return "r1"
		}
		return "r2"
	}
	tk := r.Tasks
	if tk[0].Start != 0 || tk[1].Start != 0 || rackOf("g0") != "r2" || rackOf("g1") != "r2" {
		t.Errorf("gang g: starts %v %v on nodes %s %s, want both at 0 in r2", tk[0].Start, tk[1].Start, node["g0"], node["g1"])
	}
	if tk[2].Start != tk[0].End || tk[3].Start != tk[2].Start || rackOf("h0") != "r2" || rackOf("h1") != "r2" {
		t.Errorf("gang h: starts %v %v on nodes %s %s, want both at g's end %v, in r2", tk[2].Start, tk[3].Start, node["h0"], node["h1"], tk[0].End)
	}
	for _, d := range sum[0].Domains {
		if !power.Limit(d.LimitW).AllowsRecomputed(hw.Watts(d.PeakW)) {
			t.Errorf("rack %s: peak %v W above its %v W limit", d.Name, d.PeakW, d.LimitW)
		}
	}
	if _, err := scenario.Parse([]byte("name: x\nmode: replay\ntrace: {pods: default}\ngangs: {group_by: domain}\npolicies:\n  - {name: A, scorers: [{policy: fgd, weight: 1}]}\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "neither the scenario nor a variant has a topology") {
		t.Errorf("group_by domain without a topology: %v", err)
	}
}

// replaySummary replays s under the test environment and returns its runs
// and summary.json's policies.
func replaySummary(t *testing.T, s *scenario.Scenario, in *tasks.Inputs) ([]*tasks.ReplayRun, []tasks.ReplaySummary) {
	t.Helper()
	runs, err := tasks.RunReplay(testEnv(), s, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tasks.ReplayResults("test", s, in, runs)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []tasks.ReplaySummary `json:"policies"`
	}
	if err := json.Unmarshal(res.Files["summary.json"], &sum); err != nil {
		t.Fatal(err)
	}
	return runs, sum.Policies
}
