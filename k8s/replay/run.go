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
	if err := Check(s, in, o.Factor); err != nil {
		return nil, err
	}
	simRuns, err := tasks.RunReplay(env, s, in)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Sim: simRuns}
	for i := range s.Policies {
		pr, err := RunPolicy(tb, s, in, i, o)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", s.Policies[i].Name, err)
		}
		if err := Account(env, s, in, pr, o.Factor); err != nil {
			return nil, fmt.Errorf("policy %s: accounting the observed replay: %w", s.Policies[i].Name, err)
		}
		p, err := Compare(env, s, in, &s.Policies[i], simRuns[i], pr, o.Factor)
		if err != nil {
			return nil, fmt.Errorf("policy %s: parity: %w", s.Policies[i].Name, err)
		}
		o.logf("%s", strings.TrimRight(p.Text(), "\n"))
		out.K8s = append(out.K8s, pr)
		out.Parity = append(out.Parity, p)
	}
	return out, nil
}

// Write writes the replay's results into dir, which must not exist: the
// observed replay's files as `wattsched run` writes them (summary.json,
// jobs.csv, timeline.csv, report.html, ...), the simulator's in sim/, and
// parity.json and parity.txt. It writes into a temporary sibling and
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
	var txt strings.Builder
	for _, p := range o.Parity {
		txt.WriteString(p.Text())
	}
	if err := os.WriteFile(filepath.Join(tmp, "parity.txt"), []byte(txt.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
