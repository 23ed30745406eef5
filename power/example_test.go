package power_test

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// The PWR model's estimated power of a node, and what one task would add:
// the GPU goes from idle to TDP (300 - 30 W) and the CPU socket it wakes
// from idle to TDP (120 - 15 W), as pwr-fgd's eqs. 1-3 say.
func ExamplePWR() {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "v100-0", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "V100M16"}})
	if err != nil {
		panic(err)
	}
	n := c.Nodes[0]
	idle := power.PWR{}.NodePower(n)
	d := job.Demand{CPUMilli: 8000, GPUCount: 1, GPUMilli: 1000}
	inc := power.Increase(power.PWR{}, n, &d, cluster.BestFitGPUs(&d, n))
	fmt.Printf("idle: CPU %.0f W, GPU %.0f W; one whole V100 and 8 vCPU add %.0f W\n", idle.CPU, idle.GPU, inc)
	// Output: idle: CPU 15 W, GPU 120 W; one whole V100 and 8 vCPU add 375 W
}

// What a power gate in measured mode counts for a node estimated at 15 W
// of CPU and 40 W of GPUs: a DCGM reading covers the GPUs, so the larger
// GPU figure is added to the CPU estimate; a Kepler reading covers the
// whole node; a reading below the estimate changes nothing.
func ExampleAtLeastMeasured() {
	est := power.Breakdown{CPU: 15, GPU: 40}
	fmt.Println(power.AtLeastMeasured(est, power.Reading{Watts: 100, Scope: power.ScopeGPU}))
	fmt.Println(power.AtLeastMeasured(est, power.Reading{Watts: 100, Scope: power.ScopeNode}))
	fmt.Println(power.AtLeastMeasured(est, power.Reading{Watts: 20, Scope: power.ScopeNode}))
	// Output:
	// 115
	// 100
	// 55
}
