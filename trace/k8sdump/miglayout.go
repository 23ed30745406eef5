package k8sdump

import (
	"fmt"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
)

// migRequest makes pod p, asking for migN MIG devices (the last of
// profile prof, requested in field), a request for one MIG instance of
// prof (job.Demand.MIGProfile) when it asks for one device and the
// profile is in a MIG geometry (hw/mig.yaml). A pod bound to a MIG node
// whose geometry lacks the profile is a fault (the pod is skipped with a
// warning, --strict: an error naming the file, item and field). A pod
// with several devices, or a profile of a product hw/mig.yaml does not
// have (A30, H100 NVL, H200, B200), keeps its GPU share, with a warning.
func migRequest(p *Pod, nc *nodeCtx, migN int64, prof, field string) (warning string, ferr *fieldErr) {
	if migN != 1 {
		return fmt.Sprintf("%d MIG devices (%s): kept as a share of %d thousandths of one GPU, not MIG instances (a task asks for one instance: a CUDA process sees one MIG device)", migN, p.MIG, p.Demand.GPUMilli), nil
	}
	if nc != nil {
		if g, ok := nc.migGeo[p.Node]; ok {
			if _, has := g.Profile(prof); !has {
				return "", &fieldErr{field, fmt.Errorf("MIG profile %s is not one of %s's (%s; hw/mig.yaml), the GPUs of node %s", prof, g.Name, strings.Join(g.ProfileNames(), ", "), p.Node)}
			}
			p.Demand.MIGProfile = prof
			return "", nil
		}
	}
	if _, _, err := hw.MIGProfileFor(hw.Default(), p.Demand.GPUSpec, prof); err != nil {
		return fmt.Sprintf("MIG profile %s: %v: kept as a share of %d thousandths of one GPU", prof, err, p.Demand.GPUMilli), nil
	}
	p.Demand.MIGProfile = prof
	return "", nil
}

// migGeometry finds the MIG geometry (hw/mig.yaml) of a GPU feature
// discovery product label: NVIDIA-A100-SXM4-40GB names its geometry, and
// a product the catalog knows (NVIDIA-H100-80GB-HBM3, an alias of H100)
// reaches it through its catalog model.
func migGeometry(product string) (*hw.MIGGeometry, bool) {
	if g, ok := hw.MIGFor(strings.TrimPrefix(product, "NVIDIA-")); ok {
		return g, true
	}
	if m, err := hw.Default().GPU(product); err == nil {
		return hw.MIGFor(m.Name)
	}
	return nil, false
}

// layout sets m.Layout, the instances on each of the node's MIG GPUs at
// start slices the placement rules allow, when its product's geometry is
// known: the single strategy cuts every GPU into its profile
// (cluster.SingleLayout), the mixed strategy's per-profile counts are laid
// out over the GPUs without nvidia.com/gpu (cluster.LayoutFromCounts). It
// returns what is wrong, "" if nothing: a profile the product does not have,
// or devices no layout of its GPUs holds.
func (m *nodeMIG) layout(product string) (problem string) {
	g, ok := migGeometry(product)
	if !ok || m.Strategy == StrategyDRADynamic {
		return ""
	}
	counts := map[string]int{}
	for _, in := range m.Instances {
		var n int
		var prof string
		if _, err := fmt.Sscanf(in, "%d x %s", &n, &prof); err != nil {
			return fmt.Sprintf("MIG devices %q: %v", in, err)
		}
		if p, ok := LookupMIG(prof); ok {
			prof = p.Name // the device plugin may spell +me as .me
		}
		if _, ok := g.Profile(prof); !ok {
			return fmt.Sprintf("MIG profile %s is not one of %s's (%s, hw/mig.yaml)", prof, g.Name, strings.Join(g.ProfileNames(), ", "))
		}
		counts[prof] += n
	}
	if m.exact != nil {
		// NVIDIA's DRA driver publishes where each MIG device is: kept
		// when the geometry allows it.
		for k, slots := range m.exact {
			if _, err := cluster.NewMIGGPU(g, slots, false); err != nil {
				return fmt.Sprintf("MIG devices of MIG GPU %d at their published starts: %v", k, err)
			}
		}
		m.Layout = m.exact
		return ""
	}
	gpus := m.GPUs - m.nonMIG
	if gpus < 1 {
		return fmt.Sprintf("MIG devices (%s) but no GPU left for them: %d GPUs counted, %d of them without MIG", strings.Join(m.Instances, ", "), m.GPUs, m.nonMIG)
	}
	if m.Strategy == "single" {
		one, err := cluster.SingleLayout(g, m.single.Name)
		if err != nil {
			return err.Error()
		}
		for range gpus {
			m.Layout = append(m.Layout, one)
		}
		return ""
	}
	l, err := cluster.LayoutFromCounts(g, gpus, counts)
	if err != nil {
		return err.Error()
	}
	m.Layout = l
	return ""
}
