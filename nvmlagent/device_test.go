package nvmlagent

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
)

// On a machine with an NVIDIA GPU and driver, the agent reads the real
// devices: every GPU's power is plausible and its energy counter grows.
// Elsewhere NVML cannot start and the test says so and skips: CI has no
// GPU.
func TestRealGPU(t *testing.T) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		t.Skipf("no NVIDIA GPU here: NVML init: %v (needs the NVIDIA driver's libnvidia-ml.so.1)", ret)
	}
	defer lib.Shutdown()
	c, err := New(lib, "device-test")
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs() == 0 {
		t.Skip("NVML started but sees no GPU")
	}
	read := func() map[string]map[string]float64 {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]float64{}
		for _, f := range fams {
			out[f.GetName()] = map[string]float64{}
			for _, m := range f.GetMetric() {
				key := ""
				for _, l := range m.GetLabel() {
					if l.GetName() == "gpu" || l.GetName() == "field" {
						key = l.GetValue()
					}
				}
				v := m.GetGauge().GetValue()
				if m.GetCounter() != nil {
					v = m.GetCounter().GetValue()
				}
				out[f.GetName()][key] = v
			}
		}
		return out
	}
	first := read()
	time.Sleep(2 * time.Second)
	second := read()
	for gpu, w := range second["DCGM_FI_DEV_POWER_USAGE"] {
		t.Logf("GPU %s: %.1f W, SM %v MHz, utilisation %v %%, energy %v mJ", gpu, w,
			second["DCGM_FI_DEV_SM_CLOCK"][gpu], second["DCGM_FI_DEV_GPU_UTIL"][gpu], second["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"][gpu])
		if !(w > 1 && w < 2000) {
			t.Errorf("GPU %s power %v W: want 1..2000 W", gpu, w)
		}
		if e0, ok := first["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"][gpu]; ok && !(second["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"][gpu] > e0) {
			t.Errorf("GPU %s energy did not grow in 2 s: %v -> %v mJ", gpu, e0, second["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"][gpu])
		}
	}
	if len(second["DCGM_FI_DEV_POWER_USAGE"]) != c.GPUs() {
		t.Errorf("power for %d of %d GPUs (read errors: %v)", len(second["DCGM_FI_DEV_POWER_USAGE"]), c.GPUs(), second["wattsched_nvml_read_errors_total"])
	}
}
