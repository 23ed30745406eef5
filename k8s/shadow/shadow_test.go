package shadow

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
	"github.com/wattsched/wattsched/k8s/replay"
)

func TestMain(m *testing.M) { localkube.MainWithEtcd(m, false) }

// tolerance is the kwok replay's documented energy tolerance against an
// offline run of the same pods (TestKwokReplay, docs/kubernetes.md).
const tolerance = 0.02

func dynamicKWh(b *Book) float64 { return b.Total.KWh - b.IdleKWh }

func relDiff(got, want float64) float64 { return (got - want) / want }

// TestShadowOnKwok: kube-scheduler's default profile binds 30 pods on kwok
// nodes (a real API server in process, time x100); the shadow watches with
// the scenario's wattsched profile (0.2*PWR + 0.8*FGD). It checks that the
// shadow saw every bind and end on the node the replay's own watch saw,
// that its actual ledger matches the replay's accounting of the same
// observations (replay.Account, within the replay's 2% on the pods'
// energy) and its profile ledger matches the simulator's offline run of
// the profile on the same pods as the shadow saw them (arriving at their
// binds, running until their ends: within 2%, every pod on the same kind
// of node); that the counterfactual is not the actual run; with Events on,
// one Event per pod placed elsewhere; and the report files.
func TestShadowOnKwok(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and runs 30 pods on kwok nodes (about 20 s)")
	}
	const factor = 100
	s, in, err := replay.Load(filepath.Join("testdata", "shadow.yaml"), factor)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "shadow-config.yaml")
	if err := os.WriteFile(cfgFile, []byte(replay.SchedulerConfig(s, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sh *Shadow
	var client clientset.Interface
	started := func(cs clientset.Interface, _ *rest.Config) error {
		var err error
		client = cs
		if sh, err = New(ctx, cs, cfg, Options{Seed: s.FirstSeed, Factor: factor, Log: t.Logf, Events: true}); err != nil {
			return err
		}
		return sh.Start(ctx)
	}
	pr, err := replay.RunPolicy(t, s, in, 0, replay.Options{Factor: factor, Log: t.Logf, DefaultScheduler: true, Started: started})
	if err != nil {
		t.Fatal(err)
	}
	// The replay returns once its watch saw every pod finish; the shadow's
	// informer may be a moment behind.
	var entries []Entry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		entries = sh.Entries()
		done := 0
		for _, e := range entries {
			if !e.Ended.IsZero() {
				done++
			}
		}
		if done == len(in.Pods) || time.Now().After(deadline) {
			break
		}
	}
	if err := sh.Err(); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(in.Pods) {
		t.Fatalf("the shadow saw %d binds, the replay created %d pods", len(entries), len(in.Pods))
	}
	byName := map[string]*Entry{}
	for i := range entries {
		e := &entries[i]
		byName[e.Name] = e
		if e.Ended.IsZero() || e.Skipped != "" || e.Before || len(e.Shadow) != 1 {
			t.Fatalf("pod %s: ended %v, skipped %q, before %v, %d decisions", e.Name, e.Ended, e.Skipped, e.Before, len(e.Shadow))
		}
	}
	for k, ob := range pr.Pods {
		e := byName[fmt.Sprintf("task-%06d", k)]
		if e == nil || e.Actual.Node != ob.Node || ob.Node == "" {
			t.Fatalf("pod %d: the replay saw it on %q, the shadow %+v", k, ob.Node, e)
		}
	}
	l, err := sh.Ledger(time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Books) != 2 || l.Pods != len(in.Pods) || l.Skipped != 0 || l.Books[1].NoNode != 0 {
		t.Fatalf("ledger: %d books, %d pods, %d skipped, no node %d", len(l.Books), l.Pods, l.Skipped, l.Books[1].NoNode)
	}

	// The same pods offline, as the replay's own watch saw them: each
	// arriving at its bind and running for its observed duration (on a
	// live cluster the shadow knows no other; kwok's lag makes it a few
	// simulated seconds longer than the trace's).
	off := &tasks.Inputs{Nodes: in.Nodes, Pods: append([]job.Task(nil), in.Pods...)}
	for k := range off.Pods {
		ob := pr.Pods[k]
		off.Pods[k].Submit = job.Time(math.Ceil(float64(ob.Bound.Sub(pr.Start)) / float64(time.Millisecond) * factor))
		off.Pods[k].Work = ob.Finished.Sub(ob.Bound).Seconds() * factor
	}
	// What really ran: the replay's accounting of those observations (the
	// default scheduler writes no GPU indices: both best-fit them).
	env := replay.Env("test")
	if err := replay.Account(env, s, off, pr, factor); err != nil {
		t.Fatal(err)
	}
	r := pr.Run.Result
	wantActual := float64(r.CPUEnergy+r.GPUEnergy-r.IdleEnergy) / 3.6e6
	gotActual := dynamicKWh(l.Books[0])
	t.Logf("actual: pods' energy %.4f kWh in the shadow's ledger, %.4f kWh in the replay's accounting (%+.3f%%)", gotActual, wantActual, 100*relDiff(gotActual, wantActual))
	if d := relDiff(gotActual, wantActual); math.Abs(d) > tolerance {
		t.Errorf("actual ledger: %.4f kWh, the replay's accounting %.4f kWh: %+.2f%%, beyond %.0f%%", gotActual, wantActual, 100*d, 100*tolerance)
	}

	// The profile's counterfactual: the simulator's own run of the policy
	// on the same pods as the shadow saw them (each arriving at its bind
	// and running until its end): on the same states, the core Placer and
	// the profile in the framework must agree.
	seen := &tasks.Inputs{Nodes: in.Nodes, Pods: append([]job.Task(nil), in.Pods...)}
	for k := range seen.Pods {
		e := byName[fmt.Sprintf("task-%06d", k)]
		seen.Pods[k].Submit = job.Time(math.Ceil(float64(e.Bound.Sub(l.From)) / float64(time.Millisecond) * factor))
		seen.Pods[k].Work = e.Ended.Sub(e.Bound).Seconds() * factor
	}
	runs, err := tasks.RunReplay(env, s, seen)
	if err != nil {
		t.Fatal(err)
	}
	sr := runs[0].Result
	wantShadow := float64(sr.CPUEnergy+sr.GPUEnergy-sr.IdleEnergy) / 3.6e6
	gotShadow := dynamicKWh(l.Books[1])
	t.Logf("profile %s: pods' energy %.4f kWh in the shadow's ledger, %.4f kWh in the simulator's run (%+.3f%%)", s.Policies[0].Name, gotShadow, wantShadow, 100*relDiff(gotShadow, wantShadow))
	if d := relDiff(gotShadow, wantShadow); math.Abs(d) > tolerance {
		t.Errorf("profile ledger: %.4f kWh, the simulator %.4f kWh: %+.2f%%, beyond %.0f%%", gotShadow, wantShadow, 100*d, 100*tolerance)
	}
	same, sameKind := 0, 0
	for _, tr := range sr.Tasks {
		k := int(tr.ID)
		e := byName[fmt.Sprintf("task-%06d", k)]
		if tr.Start != tr.Submit {
			t.Errorf("pod %d waited in the simulator (%d ms): the comparison assumes every pod fits at its bind", k, tr.Start-tr.Submit)
		}
		simNode := in.Nodes[tr.Node]
		d := e.Shadow[0]
		if d.Node == simNode.Name {
			same++
		}
		for _, n := range in.Nodes {
			if n.Name == d.Node && n.GPUModel == simNode.GPUModel && n.GPUs == simNode.GPUs && n.CPUMilli == simNode.CPUMilli && n.MemMiB == simNode.MemMiB {
				sameKind++
			}
		}
	}
	t.Logf("profile placements: %d of %d on the simulator's node, %d on its kind of node", same, len(in.Pods), sameKind)
	if sameKind != len(in.Pods) {
		t.Errorf("%d of %d pods on the same kind of node as the simulator placed them", sameKind, len(in.Pods))
	}
	// The counterfactual is another run: the default profile spreads, the
	// profile packs.
	differ := 0
	for _, e := range entries {
		if e.Shadow[0].Reason != "" {
			differ++
			if _, ok := ReasonText[e.Shadow[0].Reason]; !ok {
				t.Errorf("pod %s: reason %q", e.Name, e.Shadow[0].Reason)
			}
		}
	}
	t.Logf("differing placements: %d; actual %.4f kWh (total %.4f), profile %.4f kWh (total %.4f)", differ, gotActual, l.Books[0].Total.KWh, gotShadow, l.Books[1].Total.KWh)
	if differ == 0 || math.Abs(relDiff(gotShadow, gotActual)) <= tolerance {
		t.Errorf("the profile's ledger (%.4f kWh, %d pods elsewhere) is indistinguishable from the actual one (%.4f kWh)", gotShadow, differ, gotActual)
	}

	// With Events on: one WattschedShadow Event per pod placed elsewhere,
	// on that pod (the recorder writes them asynchronously).
	var got int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		evs, err := client.EventsV1().Events(replay.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = 0
		for _, ev := range evs.Items {
			if ev.Reason == "WattschedShadow" && ev.ReportingController == "wattsched-shadow" {
				if e := byName[ev.Regarding.Name]; e == nil || e.Shadow[0].Reason == "" {
					t.Errorf("event on %s, which the profile placed on its own node", ev.Regarding.Name)
				}
				got++
			}
		}
		if got >= differ || time.Now().After(deadline) {
			break
		}
	}
	if got != differ {
		t.Errorf("%d WattschedShadow events, %d pods placed elsewhere", got, differ)
	}

	// The report: ledger.csv's totals are the ledger's.
	rep, err := sh.NewReport(l.To, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := rep.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ledger.csv", "placements.csv", "summary.json", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	fh, err := os.Open(filepath.Join(dir, "ledger.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]float64{}
	for _, row := range rows[1:] {
		if row[1] == "total" {
			totals[row[0]], _ = strconv.ParseFloat(row[3], 64)
		}
	}
	for _, b := range l.Books {
		if math.Abs(totals[b.Name]-b.Total.KWh) > 1e-6 {
			t.Errorf("ledger.csv: %s total %v kWh, the ledger %v", b.Name, totals[b.Name], b.Total.KWh)
		}
	}
}
