package coloc

import (
	"fmt"

	"github.com/wattsched/wattsched/hw"
)

// Power is the EaCO paper's eq. 5 for one node: a server part from CPU
// utilisation plus one term per GPU from its utilisation,
//
//	P = ServerIdle + CPUDyn*cpu + sum_g (GPUIdle + GPUPerPct*u_g),
//
// with ServerIdle and GPUPerPct fitted to the paper's Table 1 powers at
// Table 2's utilisations (FitPower). A node with no job may sleep and then
// draws Sleep.
type Power struct {
	ServerIdle hw.Watts `json:"server_idle_w"`
	// CPUDyn is what the server adds from 0 to 100% CPU utilisation.
	CPUDyn hw.Watts `json:"cpu_dynamic_w"`
	// GPUIdle is a V100 at 0%; GPUPerPct what each utilisation point adds.
	GPUIdle   hw.Watts `json:"gpu_idle_w"`
	GPUPerPct hw.Watts `json:"gpu_w_per_util_pct"`
	// CPUPerJobPct is the CPU utilisation (%) one job on all GPUs of a node
	// adds (slope of the paper's Fig. 2 CPU means over 1-4 jobs).
	CPUPerJobPct float64  `json:"cpu_pct_per_8gpu_job"`
	Sleep        hw.Watts `json:"sleep_w"`
	GPUsPerNode  int      `json:"gpus_per_node"`
}

// GPU is one GPU's power at utilisation u (percent, capped at 100).
func (p Power) GPU(u float64) hw.Watts {
	return p.GPUIdle + p.GPUPerPct*hw.Watts(min(max(u, 0), 100))
}

// Server is the server part at CPU utilisation cpu (percent, capped).
func (p Power) Server(cpu float64) hw.Watts {
	return p.ServerIdle + p.CPUDyn*hw.Watts(min(max(cpu, 0), 100)/100)
}

// Residual is one Table 1 row: measured and modelled node power.
type Residual struct {
	Model             string
	MeasuredW, ModelW float64
}

// FitPower fits ServerIdle and GPUPerPct by least squares to the paper's
// four single-job rows (one job on all gpus GPUs of a node): Table 1's
// average power against Table 2's mean GPU utilisation, the server's CPU
// at Fig. 2's slope. gpuIdle and cpuDyn come from hardware data (the
// catalog's V100 idle power; the two CPUs' TDP).
func FitPower(c *Calibration, gpuIdle, cpuDyn, sleep hw.Watts, gpus int) (Power, []Residual, error) {
	p := Power{CPUDyn: cpuDyn, GPUIdle: gpuIdle, Sleep: sleep, GPUsPerNode: gpus}
	var num, den float64
	for k, v := range c.Sets.CPUUtilByJobs {
		num += float64(k+1) * v
		den += float64((k + 1) * (k + 1))
	}
	p.CPUPerJobPct = num / den
	n := float64(len(c.Models))
	var sx, sy, sxx, sxy float64
	for _, m := range c.Models {
		x := float64(gpus) * m.GPUAvgPct
		y := m.AvgPowerW - float64(cpuDyn)*p.CPUPerJobPct/100 - float64(gpus)*float64(gpuIdle)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return p, nil, fmt.Errorf("coloc: power fit: utilisations do not vary")
	}
	slope := (n*sxy - sx*sy) / d
	p.GPUPerPct = hw.Watts(slope)
	p.ServerIdle = hw.Watts((sy - slope*sx) / n)
	if p.GPUPerPct <= 0 || p.ServerIdle <= 0 {
		return p, nil, fmt.Errorf("coloc: power fit gives non-physical parameters: server %.1f W, %.2f W per GPU point", p.ServerIdle, p.GPUPerPct)
	}
	var res []Residual
	for _, m := range c.Models {
		u := make([]float64, gpus)
		for i := range u {
			u[i] = m.GPUAvgPct
		}
		res = append(res, Residual{Model: m.Name, MeasuredW: m.AvgPowerW, ModelW: float64(p.Node(p.CPUPerJobPct, u))})
	}
	return p, res, nil
}

// Node is the node's power at CPU utilisation cpu and GPU utilisations u.
func (p Power) Node(cpu float64, u []float64) hw.Watts {
	w := p.Server(cpu)
	for _, x := range u {
		w += p.GPU(x)
	}
	return w
}
