// Package hw is the hardware catalog: GPU and CPU models with their idle and
// peak power, memory and core counts, each entry carrying its source.
package hw

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/strictyaml"
	"github.com/wattsched/wattsched/userfile"
)

// Watts is electrical power in watts.
type Watts float64

// Joules is energy in joules (watt-seconds).
type Joules float64

// KWh converts energy to kilowatt-hours.
func (j Joules) KWh() float64 { return float64(j) / 3.6e6 }

// GPUModel describes one GPU model.
type GPUModel struct {
	Name      string  `yaml:"name"`
	IdleW     Watts   `yaml:"idle_w"`
	TDPW      Watts   `yaml:"tdp_w"`
	MemoryGiB float64 `yaml:"memory_gib"`
	Source    string  `yaml:"source"`
	// Curve, when given, is a measured power curve: watts at allocated
	// shares of the GPU from 0 (idle_w) to 1 (tdp_w), piecewise linear in
	// between. Without it a GPU with any allocation draws its TDP (the PWR
	// model, pwr-fgd eq. 2).
	Curve []CurvePoint `yaml:"curve,omitempty"`
	// BusyW, when given, is the model's measured average power while it
	// runs work at its default clocks and power limit (the mean over
	// public workloads), with BusySource saying where it comes from: the
	// busy power of the measured alternative to PWR's full-TDP reading
	// (MeasuredBusy, docs/power-models.md).
	BusyW      Watts  `yaml:"busy_w,omitempty" json:",omitempty"`
	BusySource string `yaml:"busy_source,omitempty" json:",omitempty"`
	// Speed is the model's relative throughput per workload class (nil,
	// or a class left out: unknown). A job whose duration was measured on
	// model R runs duration x speed(R)/speed(placed) on another model
	// (SpeedRatio).
	Speed *Speed `yaml:"speed,omitempty"`
}

// Workload classes a speed figure is given for.
const (
	Training  = "training"
	Inference = "inference"
)

// Speed is a GPU model's throughput relative to the catalog's unit, the
// H100 SXM5 80 GB (1), for training and for inference, each with its
// source. A class left out is unknown.
type Speed struct {
	Training  *SpeedFigure `yaml:"training,omitempty"`
	Inference *SpeedFigure `yaml:"inference,omitempty"`
}

// SpeedFigure is one relative throughput and where it comes from.
type SpeedFigure struct {
	// Relative is the throughput relative to the H100 SXM5 (1): 0.5 runs
	// the same work in twice the time.
	Relative *float64 `yaml:"relative"`
	Source   string   `yaml:"source"`
}

// MinRelativeSpeed and MaxRelativeSpeed bound a relative speed figure: a
// thousandth and a thousand times the unit, far beyond any accelerator
// sold either way, so that a ratio of two figures (at most a million)
// keeps durations in range.
const (
	MinRelativeSpeed = 0.001
	MaxRelativeSpeed = 1000
)

// For is the figure for workload class w (Training or Inference), nil
// when unknown.
func (s *Speed) For(w string) *SpeedFigure {
	switch {
	case s == nil:
		return nil
	case w == Training:
		return s.Training
	case w == Inference:
		return s.Inference
	}
	return nil
}

// check names the first bad figure of the speed of entry what.
func (s *Speed) check(what string) error {
	if s == nil {
		return nil
	}
	for _, f := range []struct {
		class string
		fig   *SpeedFigure
	}{{Training, s.Training}, {Inference, s.Inference}} {
		if f.fig == nil {
			continue
		}
		field := what + ".speed." + f.class
		switch v := f.fig.Relative; {
		case v == nil:
			return fmt.Errorf("%s.relative: missing (leave the whole %s entry out when the speed is unknown)", field, f.class)
		case !(*v >= MinRelativeSpeed && *v <= MaxRelativeSpeed):
			return fmt.Errorf("%s.relative: %v, want a finite number in [%g, %d] (throughput relative to the H100 SXM5, 1)", field, *v, MinRelativeSpeed, MaxRelativeSpeed)
		case strings.TrimSpace(f.fig.Source) == "":
			return fmt.Errorf("%s.source: empty (say where the figure comes from and what it stands for)", field)
		}
	}
	return nil
}

// CurvePoint is one point of a measured power curve.
type CurvePoint struct {
	Share float64 `yaml:"share"`
	Watts Watts   `yaml:"watts"`
}

// At is the power at allocated share u in [0, 1]: idle at 0, the curve's
// value in between (linear between points), TDP at 1 without a curve
// point there. Without a curve: idle at 0, TDP above.
func (g *GPUModel) At(u float64) Watts {
	if u <= 0 {
		return g.IdleW
	}
	if len(g.Curve) == 0 {
		return g.TDPW
	}
	px, py := 0.0, g.IdleW
	for _, p := range g.Curve {
		if u <= p.Share {
			if p.Share == px {
				return p.Watts
			}
			return py + Watts((u-px)/(p.Share-px))*(p.Watts-py)
		}
		px, py = p.Share, p.Watts
	}
	if px >= 1 {
		return py
	}
	return py + Watts((u-px)/(1-px))*(g.TDPW-py)
}

// BusyShare is the smallest allocated share of a GPU (one milli-GPU, the
// unit of job.Demand) at which MeasuredBusy's curve reaches the busy power.
const BusyShare = 0.001

// MeasuredBusy is the catalog with PWR's full-TDP reading replaced by the
// measured busy power: every GPU model without a curve gets the curve
// {BusyShare: busy_w, 1: busy_w}, so a GPU with any allocation draws
// busy_w and an idle one idle_w (PWR's step, at the measured level). A
// model with its own measured curve keeps it. A model without busy_w and
// without a curve is an error naming it.
func (c *Catalog) MeasuredBusy() (*Catalog, error) {
	out := &Catalog{GPUs: slices.Clone(c.GPUs), CPUs: slices.Clone(c.CPUs), Aliases: slices.Clone(c.Aliases)}
	for i, g := range out.GPUs {
		if len(g.Curve) > 0 {
			continue
		}
		if g.BusyW == 0 {
			return nil, fmt.Errorf("power_model measured-busy: gpus[%d] (%s) has no busy_w: give its measured busy power (busy_w, busy_source) or a curve", i, g.Name)
		}
		out.GPUs[i].Curve = []CurvePoint{{Share: BusyShare, Watts: g.BusyW}, {Share: 1, Watts: g.BusyW}}
	}
	if err := out.index(); err != nil {
		return nil, fmt.Errorf("power_model measured-busy: %w", err)
	}
	return out, nil
}

// CPUModel describes one CPU model (one socket).
type CPUModel struct {
	Name           string `yaml:"name"`
	IdleW          Watts  `yaml:"idle_w"`
	TDPW           Watts  `yaml:"tdp_w"`
	Cores          int    `yaml:"cores"`
	ThreadsPerCore int    `yaml:"threads_per_core"`
	Source         string `yaml:"source"`
}

// VCPUs is the number of virtual CPUs one socket offers.
func (c CPUModel) VCPUs() int { return c.Cores * c.ThreadsPerCore }

// Alias maps a name used in traces to a catalog entry.
type Alias struct {
	Name   string `yaml:"name"`
	Target string `yaml:"target"`
	Source string `yaml:"source"`
}

// Catalog holds the known GPU and CPU models.
type Catalog struct {
	GPUs    []GPUModel `yaml:"gpus"`
	CPUs    []CPUModel `yaml:"cpus"`
	Aliases []Alias    `yaml:"aliases"`

	gpuByName map[string]int
	cpuByName map[string]int
	alias     map[string]string
}

//go:embed catalog.yaml
var defaultCatalog []byte

// DefaultCPU is the CPU model assumed where a trace names none (pwr-fgd Section V-B).
const DefaultCPU = "Xeon-E5-2682-v4"

// Default returns the embedded catalog.
func Default() *Catalog {
	c, err := Parse(defaultCatalog)
	if err != nil {
		panic(fmt.Sprintf("embedded hw catalog: %v", err))
	}
	return c
}

// Parse decodes a catalog strictly (unknown fields are errors) and validates it.
func Parse(data []byte) (*Catalog, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Catalog
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode hw catalog: %w", err)
	}
	if err := c.index(); err != nil {
		return nil, err
	}
	return &c, nil
}

// MaxDeviceW bounds the idle_w and tdp_w (and so the curve watts) of one
// catalog device (a GPU or a CPU socket): 100 kW, some fifty times the largest
// accelerator module sold today (about 2 kW), so that no real device is
// refused, while sums over a million nodes stay far from the range where
// float64 sums lose their units and plots their scale.
const MaxDeviceW Watts = 100e3

// wattsOK names the first of a device's watt figures above MaxDeviceW.
func wattsOK(what string, idle, tdp Watts) error {
	for _, f := range []struct {
		field string
		w     Watts
	}{{"idle_w", idle}, {"tdp_w", tdp}} {
		if f.w > MaxDeviceW {
			return fmt.Errorf("%s.%s: %v W, over the %v W bound on one device (MaxDeviceW)", what, f.field, f.w, MaxDeviceW)
		}
	}
	return nil
}

func (c *Catalog) index() error {
	c.gpuByName = map[string]int{}
	c.cpuByName = map[string]int{}
	c.alias = map[string]string{}
	for i, g := range c.GPUs {
		if err := checkGPU(i, g); err != nil {
			return err
		}
		if _, dup := c.gpuByName[g.Name]; dup {
			return fmt.Errorf("gpus[%d].name: duplicate %q", i, g.Name)
		}
		c.gpuByName[g.Name] = i
	}
	for i, p := range c.CPUs {
		if err := checkCPU(i, p); err != nil {
			return err
		}
		if _, dup := c.cpuByName[p.Name]; dup {
			return fmt.Errorf("cpus[%d].name: duplicate %q", i, p.Name)
		}
		c.cpuByName[p.Name] = i
	}
	for i, a := range c.Aliases {
		_, g := c.gpuByName[a.Target]
		_, p := c.cpuByName[a.Target]
		if !g && !p {
			return fmt.Errorf("aliases[%d] (%s).target: unknown model %q", i, a.Name, a.Target)
		}
		if _, dup := c.alias[a.Name]; dup {
			return fmt.Errorf("aliases[%d].name: duplicate %q", i, a.Name)
		}
		c.alias[a.Name] = a.Target
	}
	return nil
}

// checkGPU validates GPU model g, entry i of its list.
func checkGPU(i int, g GPUModel) error {
	switch {
	case g.Name == "":
		return fmt.Errorf("gpus[%d].name: empty", i)
	case !(g.IdleW >= 0 && g.TDPW > 0 && g.IdleW <= g.TDPW) || math.IsInf(float64(g.TDPW), 0):
		return fmt.Errorf("gpus[%d] (%s): idle_w %v, tdp_w %v: need finite 0 <= idle_w <= tdp_w and tdp_w > 0", i, g.Name, g.IdleW, g.TDPW)
	case !(g.MemoryGiB >= 0) || math.IsInf(g.MemoryGiB, 0):
		return fmt.Errorf("gpus[%d] (%s).memory_gib: %v, want a finite number >= 0", i, g.Name, g.MemoryGiB)
	case !curveOK(g):
		return fmt.Errorf("gpus[%d] (%s).curve: want shares strictly increasing in (0, 1] and finite watts from idle_w to tdp_w, not decreasing", i, g.Name)
	case g.Source == "":
		return fmt.Errorf("gpus[%d] (%s).source: empty", i, g.Name)
	case g.BusyW != 0 && (!(g.BusyW >= g.IdleW && g.BusyW <= g.TDPW) || g.BusySource == ""):
		return fmt.Errorf("gpus[%d] (%s).busy_w: %v, want idle_w <= busy_w <= tdp_w (%v..%v) and a busy_source", i, g.Name, g.BusyW, g.IdleW, g.TDPW)
	case g.BusyW == 0 && g.BusySource != "":
		return fmt.Errorf("gpus[%d] (%s).busy_source: given without busy_w", i, g.Name)
	}
	if err := g.Speed.check(fmt.Sprintf("gpus[%d] (%s)", i, g.Name)); err != nil {
		return err
	}
	return wattsOK(fmt.Sprintf("gpus[%d] (%s)", i, g.Name), g.IdleW, g.TDPW)
}

// checkCPU validates CPU model p, entry i of its list.
func checkCPU(i int, p CPUModel) error {
	switch {
	case p.Name == "":
		return fmt.Errorf("cpus[%d].name: empty", i)
	case !(p.IdleW >= 0 && p.TDPW > 0 && p.IdleW <= p.TDPW) || math.IsInf(float64(p.TDPW), 0):
		return fmt.Errorf("cpus[%d] (%s): idle_w %v, tdp_w %v: need finite 0 <= idle_w <= tdp_w and tdp_w > 0", i, p.Name, p.IdleW, p.TDPW)
	case p.Cores <= 0 || p.ThreadsPerCore <= 0:
		return fmt.Errorf("cpus[%d] (%s): cores and threads_per_core must be positive", i, p.Name)
	case p.Source == "":
		return fmt.Errorf("cpus[%d] (%s).source: empty", i, p.Name)
	}
	return wattsOK(fmt.Sprintf("cpus[%d] (%s)", i, p.Name), p.IdleW, p.TDPW)
}

func curveOK(g GPUModel) bool {
	px, py := 0.0, g.IdleW
	for _, p := range g.Curve {
		if !(p.Share > px && p.Share <= 1) || !(p.Watts >= py && p.Watts <= g.TDPW) {
			return false
		}
		px, py = p.Share, p.Watts
	}
	return true
}

// With returns a catalog with extra's models and aliases added to c's
// (c is unchanged). A name that is already a model or an alias is an
// error: give a changed model a new name. from names extra's origin in
// errors (a file, or a scenario's hardware section).
func (c *Catalog) With(extra *Catalog, from string) (*Catalog, error) {
	out := &Catalog{
		GPUs:    append(slices.Clone(c.GPUs), extra.GPUs...),
		CPUs:    append(slices.Clone(c.CPUs), extra.CPUs...),
		Aliases: append(slices.Clone(c.Aliases), extra.Aliases...),
	}
	known := func(name string) bool {
		_, g := c.gpuByName[name]
		_, p := c.cpuByName[name]
		_, a := c.alias[name]
		return g || p || a
	}
	// extra's own entries first, so that an error gives the entry's index
	// in its own list, not in the merged one.
	for i, g := range extra.GPUs {
		if err := checkGPU(i, g); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	for i, p := range extra.CPUs {
		if err := checkCPU(i, p); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	for i, g := range extra.GPUs {
		if known(g.Name) {
			return nil, fmt.Errorf("%s: gpus[%d].name: %q is already in the catalog; remove your entry to use the catalog's figures, or give yours another name", from, i, g.Name)
		}
	}
	for i, p := range extra.CPUs {
		if known(p.Name) {
			return nil, fmt.Errorf("%s: cpus[%d].name: %q is already in the catalog; remove your entry to use the catalog's figures, or give yours another name", from, i, p.Name)
		}
	}
	for i, a := range extra.Aliases {
		if known(a.Name) {
			return nil, fmt.Errorf("%s: aliases[%d].name: %q is already in the catalog; remove your alias to use the catalog's", from, i, a.Name)
		}
	}
	if err := out.index(); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return out, nil
}

// ParseFile reads a catalog file (the format of the embedded catalog.yaml)
// holding models to add; errors name the file.
func ParseFile(path string) (*Catalog, error) {
	b, err := userfile.ReadFile(path, userfile.YAML)
	if err != nil {
		return nil, err
	}
	var c Catalog
	if _, err := strictyaml.Decode(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// addHint says how to add a model the catalog lacks.
const addHint = "add it to the scenario's hardware section or a --catalog file: {name, idle_w, tdp_w, memory_gib, source} (docs/scenarios.md)"

func (c *Catalog) resolve(name string) string {
	if t, ok := c.alias[name]; ok {
		return t
	}
	return name
}

// GPU returns the GPU model for a catalog name or alias.
func (c *Catalog) GPU(name string) (GPUModel, error) {
	i, ok := c.gpuByName[c.resolve(name)]
	if !ok {
		return GPUModel{}, fmt.Errorf("unknown GPU model %q (known: %s); %s", name, strings.Join(c.names(c.gpuByName), ", "), addHint)
	}
	return c.GPUs[i], nil
}

// CPU returns the CPU model for a catalog name or alias.
func (c *Catalog) CPU(name string) (CPUModel, error) {
	i, ok := c.cpuByName[c.resolve(name)]
	if !ok {
		return CPUModel{}, fmt.Errorf("unknown CPU model %q (known: %s); %s", name, strings.Join(c.names(c.cpuByName), ", "), strings.Replace(addHint, "{name, idle_w, tdp_w, memory_gib, source}", "{name, idle_w, tdp_w, cores, threads_per_core, source}", 1))
	}
	return c.CPUs[i], nil
}

func (c *Catalog) names(m map[string]int) []string {
	out := make([]string, 0, len(m)+len(c.alias))
	for k := range m {
		out = append(out, k)
	}
	for k, t := range c.alias {
		if _, ok := m[t]; ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// SpeedRatio is how much longer a job of workload class w (Training or
// Inference) whose duration was measured on GPU model ref runs on model
// placed: speed(ref)/speed(placed). Both are catalog names or aliases; an
// unknown model or a missing figure is an error naming it.
func (c *Catalog) SpeedRatio(ref, placed, w string) (float64, error) {
	r, err := c.speed(ref, w)
	if err != nil {
		return 0, err
	}
	p, err := c.speed(placed, w)
	if err != nil {
		return 0, err
	}
	return r / p, nil
}

// speed is model's relative speed for workload class w.
func (c *Catalog) speed(model, w string) (float64, error) {
	g, err := c.GPU(model)
	if err != nil {
		return 0, err
	}
	f := g.Speed.For(w)
	if f == nil {
		return 0, fmt.Errorf("GPU model %s has no %s speed in the catalog; give one as speed: {%s: {relative: R, source: ...}} in a --catalog file or the scenario's hardware section (R: throughput relative to the H100 SXM5, 1; docs/scenarios.md#job-speed)", g.Name, w, w)
	}
	return *f.Relative, nil
}
