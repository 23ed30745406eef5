// Package nvmlagent serves a node's GPU power, energy, utilisation and SM
// clock, read through NVIDIA's NVML library (github.com/NVIDIA/go-nvml), in
// the names and labels of NVIDIA's DCGM exporter, so that wattsched's
// measured-power mode and `wattsched calibrate` read it as they read DCGM.
// It is for nodes without the DCGM exporter; where that runs, use it.
//
// Each scrape reads the devices afresh. A value NVML cannot give (a GPU
// that does not support the query, a lost GPU) is left out of that scrape
// and counted in wattsched_nvml_read_errors_total; the other values are
// served.
package nvmlagent

import (
	"fmt"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
)

// The series, named and described as the DCGM exporter names and
// describes them.
var (
	powerDesc  = desc("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).")
	energyDesc = desc("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).")
	utilDesc   = desc("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).")
	clockDesc  = desc("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).")
)

// labels are the DCGM exporter's per-GPU labels.
var labels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// gpu is one device and its label values, read once at start.
type gpu struct {
	dev    nvml.Device
	labels []string
}

// Collector is a prometheus.Collector over a node's GPUs.
type Collector struct {
	gpus   []gpu
	errors *prometheus.CounterVec
}

// New reads the devices of lib (initialised by the caller) and labels
// their series with hostname, the name wattsched's measured mode matches
// to the Kubernetes node (prom.Config's nodeLabel, Hostname by default).
func New(lib nvml.Interface, hostname string) (*Collector, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %s", lib.ErrorString(ret))
	}
	c := &Collector{errors: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wattsched_nvml_read_errors_total",
		Help: "NVML reads that failed at a scrape (the value was left out), by field: power, energy, utilization, sm_clock.",
	}, []string{"field"})}
	for i := range n {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d: %s", i, lib.ErrorString(ret))
		}
		uuid, ret := dev.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d UUID: %s", i, lib.ErrorString(ret))
		}
		name, ret := dev.GetName()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML device %d name: %s", i, lib.ErrorString(ret))
		}
		device := ""
		if minor, ret := dev.GetMinorNumber(); ret == nvml.SUCCESS {
			device = "nvidia" + strconv.Itoa(minor)
		}
		bus := ""
		if pci, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
			bus = busID(pci.BusId)
		}
		c.gpus = append(c.gpus, gpu{dev: dev, labels: []string{strconv.Itoa(i), uuid, bus, device, name, hostname}})
	}
	for _, f := range []string{"power", "energy", "utilization", "sm_clock"} {
		c.errors.WithLabelValues(f)
	}
	return c, nil
}

// GPUs is the number of devices served.
func (c *Collector) GPUs() int { return len(c.gpus) }

// busID is NVML's NUL-terminated PCI bus id.
func busID(b [32]int8) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{powerDesc, energyDesc, utilDesc, clockDesc} {
		ch <- d
	}
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector: every GPU read now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.gpus {
		if mw, ret := g.dev.GetPowerUsage(); ret == nvml.SUCCESS {
			ch <- prometheus.MustNewConstMetric(powerDesc, prometheus.GaugeValue, float64(mw)/1000, g.labels...)
		} else {
			c.errors.WithLabelValues("power").Inc()
		}
		if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			ch <- prometheus.MustNewConstMetric(energyDesc, prometheus.CounterValue, float64(mj), g.labels...)
		} else {
			c.errors.WithLabelValues("energy").Inc()
		}
		if u, ret := g.dev.GetUtilizationRates(); ret == nvml.SUCCESS {
			ch <- prometheus.MustNewConstMetric(utilDesc, prometheus.GaugeValue, float64(u.Gpu), g.labels...)
		} else {
			c.errors.WithLabelValues("utilization").Inc()
		}
		if mhz, ret := g.dev.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			ch <- prometheus.MustNewConstMetric(clockDesc, prometheus.GaugeValue, float64(mhz), g.labels...)
		} else {
			c.errors.WithLabelValues("sm_clock").Inc()
		}
	}
	c.errors.Collect(ch)
}
