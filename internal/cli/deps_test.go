package cli

import (
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

func policyDeps(t *testing.T) policy.Deps {
	t.Helper()
	return policy.Deps{Workload: []job.Task{{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}}}}
}
