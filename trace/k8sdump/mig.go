package k8sdump

import (
	"fmt"
	"slices"
	"strings"
)

// MIG resources and labels of NVIDIA's device plugin and GPU feature
// discovery: with the mixed strategy each profile is its own resource
// (nvidia.com/mig-1g.10gb); with the single strategy nvidia.com/gpu counts
// MIG devices and the product label names the profile
// (NVIDIA-A100-SXM4-80GB-MIG-1g.10gb).
const (
	ResourceMIGPrefix = "nvidia.com/mig-"
	LabelGPUCount     = "nvidia.com/gpu.count"
	migProductInfix   = "-MIG-"
)

// MIGSource is where the profile table comes from.
const MIGSource = "NVIDIA Multi-Instance GPU User Guide, Supported MIG Profiles (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html) and Supported GPUs (max instances: 7, A30: 4)"

// MIGProfile is one MIG profile: the compute slices it takes of its GPU's.
type MIGProfile struct {
	Name   string // 1g.10gb, 1g.10gb+me
	Slices int    // compute slices (the number before "g")
	Of     int    // the GPU's compute slices: 7, or 4 on an A30
	GPUs   string // the products that offer it
}

// migTable lists the profiles of NVIDIA's MIG user guide, per product.
// Profile names do not collide across products with different slice
// counts, so a profile name alone gives its share.
var migTable = func() map[string]MIGProfile {
	m := map[string]MIGProfile{}
	for _, g := range []struct {
		gpus     string
		of       int
		profiles []string
	}{
		{"A30-24GB", 4, []string{"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"}},
		{"A100-40GB", 7, []string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}},
		{"A100-80GB, H100-80GB", 7, []string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}},
		{"H100-94GB (H100 NVL)", 7, []string{"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"}},
		{"H100-96GB (GH200)", 7, []string{"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"}},
		{"H200-141GB", 7, []string{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}},
		{"B200-180GB", 7, []string{"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"}},
	} {
		for _, p := range g.profiles {
			var n int
			fmt.Sscanf(p, "%dg.", &n)
			if old, ok := m[p]; ok {
				old.GPUs += ", " + g.gpus
				m[p] = old
				continue
			}
			m[p] = MIGProfile{Name: p, Slices: n, Of: g.of, GPUs: g.gpus}
		}
	}
	return m
}()

// LookupMIG finds a profile by name; the device plugin's resource names
// may spell "+me" as ".me".
func LookupMIG(name string) (MIGProfile, bool) {
	if p, ok := migTable[name]; ok {
		return p, true
	}
	if base, ok := strings.CutSuffix(name, ".me"); ok {
		p, ok := migTable[base+"+me"]
		return p, ok
	}
	return MIGProfile{}, false
}

// MIGProfiles are the table's profiles, sorted by name.
func MIGProfiles() []MIGProfile {
	out := make([]MIGProfile, 0, len(migTable))
	for _, p := range migTable {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b MIGProfile) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// migShare turns n instances of MIG profiles adding up to slices compute
// slices of of into the cluster model's demand: one GPU's share in
// thousandths, rounded down (so that profiles that fill a GPU together,
// 7 x 1g or 4g + 3g, fit one GPU in the model too), or whole GPUs when the
// slices fill whole GPUs.
func migShare(slices, of int) (count int, milli int64, err error) {
	switch {
	case slices <= 0 || of <= 0:
		return 0, 0, fmt.Errorf("no MIG slices")
	case slices < of:
		return 1, max(int64(slices)*1000/int64(of), 1), nil
	case slices%of == 0:
		return slices / of, 1000, nil
	}
	return 0, 0, fmt.Errorf("MIG instances of %d compute slices of %d make neither a share of one GPU nor whole GPUs", slices, of)
}
