package replay

import (
	"fmt"
	"os"
	"strings"

	"github.com/wattsched/wattsched/scenario"
)

// schedulerName is the profile name of the scenario's policy i.
func schedulerName(i int) string { return fmt.Sprintf("wattsched-replay-%d", i) }

// defaultSchedulerConfig is kube-scheduler's default profile alone
// (Options.DefaultScheduler), with the replay's backoff.
const defaultSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
  - schedulerName: default-scheduler
`

// gpuSelector is the core Placer's GPU choice for ps: the selector of its
// highest-weighted scorer that picks GPUs (pwr or fgd; the first on equal
// weights), else best fit.
func gpuSelector(ps *scenario.PolicySpec) string {
	sel, w := "bestfit", int64(-1)
	for _, sc := range ps.Scorers {
		if (sc.Policy == "pwr" || sc.Policy == "fgd") && sc.Weight > w {
			sel, w = sc.Policy, sc.Weight
		}
	}
	return sel
}

// workloadArgs is FGD's target workload: the scenario's own pod list, as
// the simulator's FGD uses (an embedded list by name, a CSV by path).
func workloadArgs(s *scenario.Scenario) string {
	p := s.Trace.Pods
	if p == "" {
		p = "default"
	}
	if path := s.Path(p); path != "" {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			return fmt.Sprintf("workloadFile: %q", path)
		}
	}
	return fmt.Sprintf("workload: %q", p)
}

// SchedulerConfig is the KubeSchedulerConfiguration for the scenario: the
// shape of k8s/deploy/scheduler-config.yaml (WattschedGPU filters and
// binds, every default score plugin off, every feasible node scored), one
// profile per policy with its scorers as weighted score plugins. Backoff is
// one second, the least kube-scheduler allows. With explain, every score
// plugin also runs at preBind with explain: true (Options.Explain).
func SchedulerConfig(s *scenario.Scenario, explain bool) string {
	var b strings.Builder
	b.WriteString(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
`)
	wl := workloadArgs(s)
	for i := range s.Policies {
		ps := &s.Policies[i]
		fmt.Fprintf(&b, `  - schedulerName: %s
    plugins:
      multiPoint:
        enabled:
          - name: WattschedGPU
      bind:
        disabled:
          - name: "*"
        enabled:
          - name: WattschedGPU
      preScore:
        disabled:
          - name: "*"
        enabled:
`, schedulerName(i))
		for _, sc := range ps.Scorers {
			fmt.Fprintf(&b, "          - name: %s\n", plugin[sc.Policy])
		}
		b.WriteString(`      score:
        disabled:
          - name: "*"
        enabled:
`)
		for _, sc := range ps.Scorers {
			fmt.Fprintf(&b, "          - name: %s\n            weight: %d\n", plugin[sc.Policy], sc.Weight)
		}
		if explain {
			b.WriteString("      preBind:\n        enabled:\n")
			for _, sc := range ps.Scorers {
				fmt.Fprintf(&b, "          - name: %s\n", plugin[sc.Policy])
			}
		}
		fmt.Fprintf(&b, `    pluginConfig:
      - name: WattschedGPU
        args:
          gpuSelector: %s
          fgd:
            %s
`, gpuSelector(ps), wl)
		for _, sc := range ps.Scorers {
			switch {
			case sc.Policy == "fgd":
				fmt.Fprintf(&b, "      - name: FGD\n        args:\n          %s\n", wl)
				if explain {
					b.WriteString("          explain: true\n")
				}
			case explain:
				fmt.Fprintf(&b, "      - name: %s\n        args:\n          explain: true\n", plugin[sc.Policy])
			}
		}
	}
	return b.String()
}
