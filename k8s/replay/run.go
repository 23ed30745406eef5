package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

// Outcome is a whole replay: the simulator's runs, kube-scheduler's and
// their parity, one per policy.
type Outcome struct {
	Sim    []*tasks.ReplayRun
	K8s    []*PolicyRun
	Parity []*Parity
	Factor float64
}

// Env is the simulator environment of a replay: the built-in policies and
// catalog, as `wattsched run` uses without --catalog.
func Env(version string) *experiment.Env {
	return &experiment.Env{Version: version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
}

// Load reads a scenario and its inputs and checks that the kwok replay
// can express it (before anything starts).
func Load(path string, factor float64) (*scenario.Scenario, *tasks.Inputs, error) {
	s, err := scenario.Load(path)
	if err != nil {
		return nil, nil, err
	}
	// Refuse what the replay cannot express before reading the trace.
	if s.Mode != scenario.Replay {
		return nil, nil, Check(s, &tasks.Inputs{}, factor)
	}
	in, err := tasks.LoadInputs(s)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := Check(s, in, factor); err != nil {
		return nil, nil, err
	}
	return s, in, nil
}

// Replay runs the simulator on the scenario, then each policy through
// kube-scheduler on kwok nodes (StartEtcd must have been called), and
// compares them.
func Replay(tb testing.TB, env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, o Options) (*Outcome, error) {
	out, err := simulated(env, s, in, o.Factor)
	if err != nil {
		return nil, err
	}
	for i := range s.Policies {
		pr, err := RunPolicy(tb, s, in, i, o)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", s.Policies[i].Name, err)
		}
		if err := out.add(env, s, in, i, pr, o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// simulated checks that the replay can express the scenario at factor
// and runs the simulator on it: an outcome with no replay added yet.
func simulated(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, factor float64) (*Outcome, error) {
	if err := Check(s, in, factor); err != nil {
		return nil, err
	}
	simRuns, err := tasks.RunReplay(env, s, in)
	if err != nil {
		return nil, err
	}
	return &Outcome{Sim: simRuns, Factor: factor}, nil
}

// add accounts and compares policy i's replay pr.
func (out *Outcome) add(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, i int, pr *PolicyRun, o Options) error {
	if err := Account(env, s, in, pr, o.Factor); err != nil {
		return fmt.Errorf("policy %s: accounting the observed replay: %w", s.Policies[i].Name, err)
	}
	p, err := Compare(env, s, in, &s.Policies[i], out.Sim[i], pr, o.Factor)
	if err != nil {
		return fmt.Errorf("policy %s: parity: %w", s.Policies[i].Name, err)
	}
	o.logf("%s", strings.TrimRight(p.Text(), "\n"))
	out.K8s = append(out.K8s, pr)
	out.Parity = append(out.Parity, p)
	return nil
}

// observedFile is observed.json: what the watch saw in each policy's
// replay, from which Recompute rebuilds the accounting and the parity.
type observedFile struct {
	Scenario string       `json:"scenario"`
	Factor   float64      `json:"time_factor"`
	Runs     []*PolicyRun `json:"runs"`
}

// Recompute rebuilds a replay's outcome from the observed.json that Write
// wrote into dir (the simulator's run, the accounting and the parity, as
// this version computes them) without a cluster: the same scenario and
// observations give the same files.
func Recompute(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, dir string, o Options) (*Outcome, error) {
	b, err := os.ReadFile(filepath.Join(dir, "observed.json"))
	if err != nil {
		return nil, err
	}
	var f observedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "observed.json"), err)
	}
	if f.Scenario != s.Name || len(f.Runs) != len(s.Policies) {
		return nil, fmt.Errorf("%s: scenario %q with %d policies, not %q with %d", filepath.Join(dir, "observed.json"), f.Scenario, len(f.Runs), s.Name, len(s.Policies))
	}
	for i, pr := range f.Runs {
		if pr.Policy != s.Policies[i].Name || len(pr.Pods) != len(in.Pods) {
			return nil, fmt.Errorf("%s: run %d: policy %q with %d pods, not %q with %d", filepath.Join(dir, "observed.json"), i, pr.Policy, len(pr.Pods), s.Policies[i].Name, len(in.Pods))
		}
	}
	o.Factor = f.Factor
	out, err := simulated(env, s, in, o.Factor)
	if err != nil {
		return nil, err
	}
	for i, pr := range f.Runs {
		if err := out.add(env, s, in, i, pr, o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Write writes the replay's results into dir, which must not exist: the
// observed replay's files as `wattsched run` writes them (summary.json,
// jobs.csv, timeline.csv, report.html, ...), the simulator's in sim/,
// parity.json and parity.txt, and observed.json (the watch's bind, finish
// and delete times, nodes, GPUs and explanations of every pod, from which
// Recompute rebuilds the rest). It writes into a temporary sibling and
// renames it, so that nothing is half-written.
func Write(dir, version string, s *scenario.Scenario, in *tasks.Inputs, o *Outcome) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("output directory %s exists", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var runs []*tasks.ReplayRun
	for _, pr := range o.K8s {
		runs = append(runs, pr.Run)
	}
	res, err := tasks.ReplayResults(version, s, in, runs)
	if err != nil {
		return err
	}
	if err := res.Write(tmp); err != nil {
		return err
	}
	simRes, err := tasks.ReplayResults(version, s, in, o.Sim)
	if err != nil {
		return err
	}
	simDir := filepath.Join(tmp, "sim")
	if err := os.Mkdir(simDir, 0o755); err != nil {
		return err
	}
	if err := simRes.Write(simDir); err != nil {
		return err
	}
	js, err := json.MarshalIndent(o.Parity, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "parity.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	obs, err := json.MarshalIndent(observedFile{Scenario: s.Name, Factor: o.Factor, Runs: o.K8s}, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "observed.json"), append(obs, '\n'), 0o644); err != nil {
		return err
	}
	var txt strings.Builder
	for _, p := range o.Parity {
		txt.WriteString(p.Text())
	}
	if err := os.WriteFile(filepath.Join(tmp, "parity.txt"), []byte(txt.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
