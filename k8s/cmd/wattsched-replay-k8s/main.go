// Command wattsched-replay-k8s replays a wattsched replay scenario through
// the real kube-scheduler: it starts an embedded etcd and a kube-apiserver
// in this process (as the k8s integration tests do), creates the
// scenario's nodes as fake GPU nodes run by kwok, creates each pod at its
// arrival time (compressed by -factor), lets kwok run it for its duration
// and complete it, and lets kube-scheduler 1.34 with wattsched's plugins
// bind it. It writes what `wattsched run` writes for the observed replay
// (summary.json, jobs.csv, ...), the simulator's own run in sim/, and the
// parity of the two (parity.json, parity.txt), and what its watch saw
// (observed.json), from which -from recomputes the rest without a cluster.
//
//	wattsched-replay-k8s -c scenario.yaml -o out/replay-k8s [-factor 1000] [-explain]
//	wattsched-replay-k8s -c scenario.yaml -o out/again -from out/replay-k8s
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"

	"github.com/wattsched/wattsched/k8s/replay"
)

// version is set with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wattsched-replay-k8s", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("c", "", "replay scenario file (required)")
	out := fs.String("o", "", "output directory, must not exist (required)")
	factor := fs.Float64("factor", 1000, "time compression: simulated seconds per wall-clock second")
	logs := fs.Bool("logs", false, "keep the API server's, kube-scheduler's and kwok's logs")
	explain := fs.Bool("explain", false, "turn on the score plugins' explain mode and keep each bind's scores in observed.json")
	from := fs.String("from", "", "recompute the results from DIR/observed.json of an earlier replay of the scenario, without a cluster")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfg == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: wattsched-replay-k8s -c scenario.yaml -o DIR [-factor 1000] [-explain] [-logs] [-from EARLIER_DIR]")
		return 2
	}
	if *logs {
		os.Setenv("WATTSCHED_K8S_LOGS", "1")
	} else {
		kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(kfs)
		_ = kfs.Set("logtostderr", "false")
		_ = kfs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "wattsched-replay-k8s:", err)
		return 1
	}
	// Everything that can be refused is refused before anything starts.
	s, in, err := replay.Load(*cfg, *factor)
	if err != nil {
		return fail(err)
	}
	if _, err := os.Stat(*out); err == nil {
		return fail(fmt.Errorf("output directory %s exists", *out))
	}
	opts := replay.Options{Factor: *factor, Explain: *explain,
		Log: func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }}
	if *from != "" {
		o, err := replay.Recompute(replay.Env(version), s, in, *from, opts)
		if err != nil {
			return fail(err)
		}
		if err := replay.Write(*out, version, s, in, o); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "results recomputed from %s in %s\n", *from, *out)
		return 0
	}
	stop, err := replay.StartEtcd()
	if err != nil {
		return fail(fmt.Errorf("embedded etcd: %w", err))
	}
	defer stop()
	tb := &procTB{}
	defer tb.cleanup()
	o, err := tb.do(func() (*replay.Outcome, error) {
		return replay.Replay(tb, replay.Env(version), s, in, opts)
	})
	if err != nil {
		return fail(err)
	}
	if err := replay.Write(*out, version, s, in, o); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "results in %s (summary.json, jobs.csv, timeline.csv, report.html; the simulator's in sim/; parity.json, parity.txt)\n", *out)
	return 0
}

// procTB stands in for testing.TB where the integration framework wants
// one (framework.StartTestServer): a fatal error ends the replay with that
// error, cleanups run when the command ends.
type procTB struct {
	testing.TB
	cleanups []func()
	failed   bool
}

type fatal struct{ msg string }

func (t *procTB) do(f func() (*replay.Outcome, error)) (o *replay.Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			if ft, ok := r.(fatal); ok {
				o, err = nil, errors.New(ft.msg)
				return
			}
			panic(r)
		}
	}()
	return f()
}

func (t *procTB) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

func (t *procTB) Helper()                   {}
func (t *procTB) Name() string              { return "wattsched-replay-k8s" }
func (t *procTB) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *procTB) Failed() bool              { return t.failed }
func (t *procTB) Log(a ...any)              { klog.Info(a...) }
func (t *procTB) Logf(f string, a ...any)   { klog.Infof(f, a...) }
func (t *procTB) Error(a ...any)            { t.failed = true; klog.Error(a...) }
func (t *procTB) Errorf(f string, a ...any) { t.failed = true; klog.Errorf(f, a...) }
func (t *procTB) Fatal(a ...any)            { panic(fatal{fmt.Sprint(a...)}) }
func (t *procTB) Fatalf(f string, a ...any) { panic(fatal{fmt.Sprintf(f, a...)}) }
func (t *procTB) TempDir() string {
	d, err := os.MkdirTemp("", "wattsched-replay-")
	if err != nil {
		panic(fatal{err.Error()})
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
