package k8sdump

import (
	"fmt"
	"sort"
	"strconv"
)

// LabelPodGroup is the pod label of scheduler-plugins' Coscheduling that
// names a pod's PodGroup (its gang) in its namespace.
const LabelPodGroup = "scheduling.x-k8s.io/pod-group"

// gangOf is the gang o (a pod) belongs to, "namespace/name", or "": the
// Workload API's spec.schedulingGroup.podGroupName (Kubernetes 1.36 and
// later), or its spec.workloadRef (1.35: the Workload's name, the pod
// group within it and the replica key, "namespace/workload/group[/key]"),
// else the Coscheduling label.
func gangOf(o object) string {
	if g := o.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return o.Metadata.Namespace + "/" + *g.PodGroupName
	}
	if w := o.Spec.WorkloadRef; w != nil && w.Name != "" {
		g := o.Metadata.Namespace + "/" + w.Name + "/" + w.PodGroup
		if w.PodGroupReplicaKey != "" {
			g += "/" + w.PodGroupReplicaKey
		}
		return g
	}
	if g := o.Metadata.Labels[LabelPodGroup]; g != "" {
		return o.Metadata.Namespace + "/" + g
	}
	return ""
}

// minOf is the minimum number of pods a PodGroup item asks to start
// together, and whether o is a PodGroup that says: Coscheduling's
// spec.minMember, or the Workload API's spec.schedulingPolicy.gang.minCount.
func minOf(o object) (int, bool) {
	if o.Kind != "PodGroup" {
		return 0, false
	}
	if o.Spec.MinMember > 0 {
		return o.Spec.MinMember, true
	}
	if p := o.Spec.SchedulingPolicy; p != nil && p.Gang != nil && p.Gang.MinCount > 0 {
		return p.Gang.MinCount, true
	}
	return 0, false
}

// gangs sets each kept pod's gang size: the number of kept pods of its
// gang (the engine starts a gang when all its pods can start, and
// checks that it has gang_size pods). A PodGroup in the dump asking for
// more pods than the dump keeps (pods skipped, or not yet created) is a
// warning, or with strict an error naming the PodGroup's item: the gang
// is replayed with the pods kept.
func (d *Dump) gangs(items []object, file string, strict bool) error {
	n := map[string]int{}
	for _, p := range d.Pods {
		if p.Gang != "" {
			n[p.Gang]++
		}
	}
	for i := range d.Pods {
		if g := d.Pods[i].Gang; g != "" {
			d.Pods[i].GangSize = n[g]
		}
	}
	type want struct {
		item int
		min  int
	}
	groups := map[string]want{}
	for i, o := range items {
		if m, ok := minOf(o); ok {
			groups[o.Metadata.Namespace+"/"+o.Metadata.Name] = want{i, m}
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		w := groups[g]
		if w.min <= n[g] || n[g] == 0 {
			continue
		}
		msg := fmt.Sprintf("PodGroup %s asks for %d pods to start together, the dump keeps %d of its pods: replayed as a gang of %d", g, w.min, n[g], n[g])
		if strict {
			return fmt.Errorf("%s: items[%d].spec: %s", file, w.item, msg)
		}
		d.Warnings = append(d.Warnings, fmt.Sprintf("items[%d] %s", w.item, msg))
	}
	return nil
}

// gangColumns are the pod list's gang and gang_size fields for p (empty
// for a pod of its own).
func gangColumns(p Pod) (string, string) {
	if p.Gang == "" {
		return "", ""
	}
	return csvField(p.Gang), strconv.Itoa(p.GangSize)
}
