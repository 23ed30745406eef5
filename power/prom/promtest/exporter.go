package promtest

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Node is one node of the generated power trace.
type Node struct {
	Name string
	// Model is the GPU's DCGM modelName ("Tesla T4").
	Model string
	GPUs  int
	// IdleW and FullW are each GPU's power at 0 % and 100 % utilisation;
	// in between the trace is linear in utilisation, plus NoiseW.
	IdleW, FullW float64
	// NoiseW is the half-width of a deterministic uniform noise added to
	// each GPU's power.
	NoiseW float64
	// OtherW is the rest of the node (CPUs, memory, fans): Kepler's
	// platform power is OtherW plus the GPUs.
	OtherW float64
	// StaleBy > 0 serves this node's series with an explicit timestamp
	// that old and values that never change: an exporter that stopped
	// updating.
	StaleBy time.Duration
	// Bad, when not empty, is served as every GPU's power ("NaN", "-3").
	Bad string
}

// Util is GPU g of node i's generated utilisation (percent, a multiple of
// 5) at step k: a deterministic hash of (seed, i, g, k), so that a trace
// is replayed identically.
func Util(seed uint64, i, g, k int) float64 {
	return float64(hash(seed, i, g, k, 1)%21) * 5
}

// Power is the trace's power of a GPU of n at utilisation u (percent) with
// the deterministic noise of (seed, i, g, k).
func Power(n Node, seed uint64, i, g, k int, u float64) float64 {
	noise := (float64(hash(seed, i, g, k, 2)%1001)/1000 - 0.5) * 2 * n.NoiseW
	return n.IdleW + (n.FullW-n.IdleW)*u/100 + noise
}

func hash(xs ...any) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, xs...)
	return h.Sum64()
}

// Exporter serves DCGM exporter and Kepler series for its nodes; each
// scrape advances the trace one step.
type Exporter struct {
	// URL is the endpoint's base URL; Target its host:port for a scrape
	// config.
	URL, Target string

	seed  uint64
	nodes []Node

	mu       sync.Mutex
	k        int
	last     time.Time
	energyMJ [][]float64 // per node, per GPU: DCGM total energy (mJ)
	platJ    [][2]float64
	frozen   map[string]string // stale nodes' lines, served unchanged
}

// NewExporter starts the endpoint (/metrics) and stops it when the test ends.
func NewExporter(t testing.TB, seed uint64, nodes ...Node) *Exporter {
	e := &Exporter{seed: seed, nodes: nodes, frozen: map[string]string{}}
	e.energyMJ = make([][]float64, len(nodes))
	e.platJ = make([][2]float64, len(nodes))
	for i, n := range nodes {
		e.energyMJ[i] = make([]float64, n.GPUs)
	}
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	e.Target = strings.TrimPrefix(srv.URL, "http://")
	return e
}

// Steps is how many scrapes have been served.
func (e *Exporter) Steps() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.k
}

func (e *Exporter) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	dt := 0.0
	if !e.last.IsZero() {
		dt = now.Sub(e.last).Seconds()
	}
	e.last = now
	k := e.k
	e.k++
	var b strings.Builder
	type line struct{ name, help, typ string }
	metrics := []line{
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "gauge"},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", "counter"},
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge"},
		{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "gauge"},
		{"kepler_node_platform_joules_total", "Aggregated value in platform_joules value from kepler.", "counter"},
	}
	per := make([][]string, len(metrics)) // the series of each metric
	for i, n := range e.nodes {
		platW := n.OtherW
		for g := 0; g < n.GPUs; g++ {
			u := Util(e.seed, i, g, k)
			p := Power(n, e.seed, i, g, k, u)
			e.energyMJ[i][g] += p * dt * 1000
			platW += p
			pw := fmt.Sprintf("%.3f", p)
			if n.Bad != "" {
				pw = n.Bad
			}
			lbl := fmt.Sprintf(`gpu="%d",UUID="GPU-%08x-%d",device="nvidia%d",modelName=%q,Hostname=%q`, g, hash(n.Name)&0xffffffff, g, g, n.Model, n.Name)
			clock := 300 + int(u/100*1290)
			per[0] = append(per[0], e.series(i, n, metrics[0].name, lbl, pw, now))
			per[1] = append(per[1], e.series(i, n, metrics[1].name, lbl, fmt.Sprintf("%.0f", e.energyMJ[i][g]), now))
			per[2] = append(per[2], e.series(i, n, metrics[2].name, lbl, fmt.Sprintf("%.0f", u), now))
			per[3] = append(per[3], e.series(i, n, metrics[3].name, lbl, fmt.Sprintf("%d", clock), now))
		}
		// Kepler splits platform energy into an idle and a dynamic part.
		idleW := n.OtherW + float64(n.GPUs)*n.IdleW
		e.platJ[i][0] += idleW * dt
		e.platJ[i][1] += (platW - idleW) * dt
		for m, mode := range []string{"idle", "dynamic"} {
			lbl := fmt.Sprintf(`instance=%q,mode=%q,source="acpi"`, n.Name, mode)
			per[4] = append(per[4], e.series(i, n, metrics[4].name, lbl, fmt.Sprintf("%.3f", e.platJ[i][m]), now))
		}
	}
	for m, ml := range metrics {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", ml.name, ml.help, ml.name, ml.typ)
		for _, s := range per[m] {
			b.WriteString(s)
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// series writes one exposition line (e.mu held); a stale node's lines
// carry the explicit timestamp of its first scrape minus StaleBy, and keep
// the values of that scrape.
func (e *Exporter) series(i int, n Node, name, labels, value string, now time.Time) string {
	if n.StaleBy <= 0 {
		return fmt.Sprintf("%s{%s} %s\n", name, labels, value)
	}
	key := fmt.Sprintf("%d/%s{%s}", i, name, labels)
	if l, ok := e.frozen[key]; ok {
		return l
	}
	l := fmt.Sprintf("%s{%s} %s %d\n", name, labels, value, now.Add(-n.StaleBy).UnixMilli())
	e.frozen[key] = l
	return l
}
