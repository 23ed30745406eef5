package nvmlagent

import (
	"context"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/calibrate"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// simGPU stands in for a GPU behind NVML (go-nvml's mock of a DGX A100
// server, whose devices report no power by themselves): each power read
// moves it to the next utilisation of a cycle, and its power is linear
// from idle to full power in that utilisation; utilisation, energy and
// SM clock are read for the same state. Without a GPU, this is what the
// agent reads; the agent's own code is what is tested.
type simGPU struct {
	mu           sync.Mutex
	idleW, fullW float64
	utils        []uint32
	step         int
	energyMJ     uint64
	fail         map[string]bool // fields that return ERROR_NOT_SUPPORTED
	lost         bool            // every read returns ERROR_GPU_IS_LOST
}

func (g *simGPU) watts() float64 {
	u := float64(g.utils[g.step%len(g.utils)]) / 100
	return g.idleW + u*(g.fullW-g.idleW)
}

func (g *simGPU) install(d *dgxa100.Device) {
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.lost {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		if g.fail["power"] {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		g.step++
		g.energyMJ += uint64(g.watts() * 1000) // a second at this power
		return uint32(math.Round(g.watts() * 1000)), nvml.SUCCESS
	}
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.lost {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		if g.fail["energy"] {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		return g.energyMJ, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.lost {
			return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
		}
		return nvml.Utilization{Gpu: g.utils[g.step%len(g.utils)]}, nvml.SUCCESS
	}
	d.GetClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		if t != nvml.CLOCK_SM {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.lost {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		return 210 + 12*g.utils[g.step%len(g.utils)], nvml.SUCCESS
	}
}

// server is a mocked DGX A100 whose GPUs are simGPUs (idle 50 W, full
// 400 W, the catalog's A100), GPU i starting i steps into the cycle.
func server(t *testing.T) (*dgxa100.Server, []*simGPU) {
	t.Helper()
	s := dgxa100.New()
	if ret := s.Init(); ret != nvml.SUCCESS {
		t.Fatalf("mock NVML init: %v", ret)
	}
	var gpus []*simGPU
	for i, d := range s.Devices {
		g := &simGPU{idleW: 50, fullW: 400, utils: []uint32{0, 10, 25, 40, 55, 70, 85, 100, 5, 60}, step: i}
		g.install(d.(*dgxa100.Device))
		gpus = append(gpus, g)
	}
	return s, gpus
}

// The series carry the DCGM exporter's names, units and labels; a value
// NVML cannot give is left out and counted, the others are served.
func TestCollectorServesDCGMSeries(t *testing.T) {
	s, gpus := server(t)
	gpus[7].fail = map[string]bool{"energy": true}
	c, err := New(s, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs() != 8 {
		t.Fatalf("%d GPUs, want 8", c.GPUs())
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{} // family -> gpu -> value
	for _, f := range fams {
		got[f.GetName()] = map[string]float64{}
		for _, m := range f.GetMetric() {
			ls := map[string]string{}
			var names []string
			for _, l := range m.GetLabel() {
				ls[l.GetName()], names = l.GetValue(), append(names, l.GetName())
			}
			key := ls["gpu"]
			if f.GetName() == "wattsched_nvml_read_errors_total" {
				got[f.GetName()][ls["field"]] = m.GetCounter().GetValue()
				continue
			}
			sort.Strings(names)
			if want := []string{"Hostname", "UUID", "device", "gpu", "modelName", "pci_bus_id"}; !slices.Equal(names, want) {
				t.Errorf("%s labels %v, want %v", f.GetName(), names, want)
			}
			if ls["Hostname"] != "node-a" || ls["modelName"] != "Mock NVIDIA A100-SXM4-40GB" || ls["device"] != "nvidia"+key || ls["UUID"] == "" {
				t.Errorf("%s{gpu=%s} labels %v", f.GetName(), key, ls)
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			got[f.GetName()][key] = v
		}
	}
	// GPU 3 is at step 4 after its read: 55% -> 50 + 0.55*350 W.
	if v := got["DCGM_FI_DEV_POWER_USAGE"]["3"]; math.Abs(v-242.5) > 1e-9 {
		t.Errorf("GPU 3 power %v W, want 242.5", v)
	}
	if v := got["DCGM_FI_DEV_GPU_UTIL"]["3"]; v != 55 {
		t.Errorf("GPU 3 utilisation %v %%, want 55", v)
	}
	if v := got["DCGM_FI_DEV_SM_CLOCK"]["3"]; v != 210+12*55 {
		t.Errorf("GPU 3 SM clock %v MHz, want %d", v, 210+12*55)
	}
	if v := got["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["3"]; v != 242500 {
		t.Errorf("GPU 3 energy %v mJ, want 242500", v)
	}
	if _, ok := got["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["7"]; ok {
		t.Error("GPU 7's energy served although NVML refused it")
	}
	if len(got["DCGM_FI_DEV_POWER_USAGE"]) != 8 || len(got["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]) != 7 {
		t.Errorf("power for %d GPUs, energy for %d: want 8 and 7", len(got["DCGM_FI_DEV_POWER_USAGE"]), len(got["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]))
	}
	if v := got["wattsched_nvml_read_errors_total"]["energy"]; v != 1 {
		t.Errorf("energy read errors %v, want 1", v)
	}
	// The exposition text has the DCGM exporter's HELP and TYPE lines.
	h := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer h.Close()
	resp, err := http.Get(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n",
		"# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n",
		"# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n",
		"# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// A real Prometheus scrapes the agent; wattsched's measured-power meter
// reads the node's GPU power from it as it reads the DCGM exporter, and
// calibration from its range query recovers the simulated GPUs' idle and
// full power within 2%.
func TestAgentThroughPrometheus(t *testing.T) {
	s, gpus := server(t)
	c, err := New(s, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	agent := httptest.NewUnstartedServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	agent.Listener.Close()
	agent.Listener = ln
	agent.Start()
	defer agent.Close()
	start := time.Now()
	srv := promtest.Start(t, ln.Addr().String())

	m, err := prom.NewMeter(prom.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	promtest.WaitReading(t, m, "node-a")
	r := m.Status("node-a").Reading
	// Each GPU draws between idle and full power: the node's sum lies
	// between 8 x 50 and 8 x 400 W, and is a GPU-scope reading.
	if r.Scope != "gpu" || r.Watts < 400 || r.Watts > 3200 {
		t.Errorf("node-a reading %+v, want GPU scope within 400..3200 W", r)
	}

	// Ten seconds of scrapes give every GPU ten points of the cycle.
	time.Sleep(12 * time.Second)
	client, err := prom.NewClient(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	o := calibrate.Default()
	o.From = "agent"
	series, err := client.QueryRange(context.Background(), o.Query(), start, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fits, err := calibrate.Fit(series, o, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(fits) != 1 {
		t.Fatalf("%d models fitted, want 1: %+v", len(fits), fits)
	}
	f := fits[0]
	idle, full := float64(f.GPU.IdleW), float64(f.GPU.TDPW)
	t.Logf("%s: %d GPUs, %d samples: idle %.3f W, full %.3f W (true %v, %v), RMSE %.3f W", f.Name, f.GPUs, f.Samples, idle, full, gpus[0].idleW, gpus[0].fullW, f.RMSEW)
	if math.Abs(idle-50)/50 > 0.02 || math.Abs(full-400)/400 > 0.02 {
		t.Errorf("fitted idle %.3f W, full %.3f W: want 50 and 400 within 2%%", idle, full)
	}
	if f.GPUs != 8 {
		t.Errorf("%d GPUs fitted, want 8", f.GPUs)
	}
}

// gatherCounts is, per family, how many GPUs have a series, and the read
// errors by field.
func gatherCounts(t *testing.T, reg *prometheus.Registry) (gpus map[string]int, errs map[string]float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gpus, errs = map[string]int{}, map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if f.GetName() == "wattsched_nvml_read_errors_total" {
				errs[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
				continue
			}
			gpus[f.GetName()]++
		}
	}
	return gpus, errs
}

// A GPU that falls off the bus (NVML answers ERROR_GPU_IS_LOST to every
// read of its handle) and another that does not support power readings
// are left out of each scrape, and counted, while the other GPUs are
// served; the lost GPU is served again when its reads succeed again.
func TestCollectorLostGPU(t *testing.T) {
	s, gpus := server(t)
	gpus[5].fail = map[string]bool{"power": true}
	c, err := New(s, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	all := func(power, other int) map[string]int {
		return map[string]int{"DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": other,
			"DCGM_FI_DEV_GPU_UTIL": other, "DCGM_FI_DEV_SM_CLOCK": other}
	}
	steps := []struct {
		lost     bool
		wantGPUs map[string]int
		wantErrs map[string]float64 // cumulative
	}{
		// Scrape 1: GPU 5 has no power (7 of 8 served), one error.
		{false, all(7, 8), map[string]float64{"power": 1, "energy": 0, "utilization": 0, "sm_clock": 0}},
		// Scrape 2: GPU 2 lost too: 6 powers, 7 of the rest; errors
		// power 1+2, the others 0+1.
		{true, all(6, 7), map[string]float64{"power": 3, "energy": 1, "utilization": 1, "sm_clock": 1}},
		// Scrape 3: GPU 2 back: as scrape 1, errors power 3+1.
		{false, all(7, 8), map[string]float64{"power": 4, "energy": 1, "utilization": 1, "sm_clock": 1}},
	}
	for i, st := range steps {
		gpus[2].mu.Lock()
		gpus[2].lost = st.lost
		gpus[2].mu.Unlock()
		got, errs := gatherCounts(t, reg)
		if !maps.Equal(st.wantGPUs, got) {
			t.Errorf("scrape %d: GPUs served %v, want %v", i+1, got, st.wantGPUs)
		}
		if !maps.Equal(st.wantErrs, errs) {
			t.Errorf("scrape %d: read errors %v, want %v", i+1, errs, st.wantErrs)
		}
	}
}
