package plugins

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/wattsched/wattsched/k8s/gpushare"
)

// ScoreArgs are the arguments of the score plugins other than FGD (FGD's
// are WorkloadArgs and Explain).
type ScoreArgs struct {
	// Explain makes the plugin write, in PreBind, the pod annotation
	// ExplainAnnotation(plugin): the chosen node's raw and normalised
	// score and the next best nodes' (off by default; the plugin must also
	// be enabled at the preBind extension point).
	Explain bool `json:"explain,omitempty"`
}

// fgdArgs are FGD's arguments: its workload and Explain.
type fgdArgs struct {
	WorkloadArgs
	Explain bool `json:"explain,omitempty"`
}

// ExplainTop is how many next best nodes an explanation lists.
const ExplainTop = 3

// ExplainAnnotation is the pod annotation a score plugin with explain on
// writes: wattsched.io/explain-<plugin name in lower case>.
func ExplainAnnotation(plugin string) string {
	return gpushare.Prefix + "explain-" + strings.ToLower(plugin)
}

// NodeExplanation is one node's score from one plugin.
type NodeExplanation struct {
	Node string `json:"node"`
	// Raw is the core scorer's score (PWR: minus the added watts); Score
	// is it after NormalizeScore, over the feasible nodes (0..100).
	Raw   int64 `json:"raw"`
	Score int64 `json:"score"`
}

// Explanation is the value of ExplainAnnotation: the chosen node's scores
// from this plugin, the next best nodes by this plugin's normalised score
// (ties by name), and how many nodes were scored. The profile's weighted
// total is weight x score summed over its score plugins (the weights are
// in the scheduler configuration).
type Explanation struct {
	Chosen   NodeExplanation   `json:"chosen"`
	Next     []NodeExplanation `json:"next"`
	Feasible int               `json:"feasible_nodes"`
	// Note says why there are no scores: kube-scheduler scores nothing
	// when one node is feasible (NotScored).
	Note string `json:"note,omitempty"`
}

// NotScored is Explanation.Note when the pod's node was the only feasible
// one: kube-scheduler then runs no score plugin.
const NotScored = "the only feasible node: kube-scheduler did not score it"

// normScores are NormalizeScore's scores by node name (explain only).
type normScores map[string]int64

func (n normScores) Clone() fwk.StateData { return n }

var _ fwk.PreBindPlugin = (*Score)(nil)

func (p *Score) normKey() fwk.StateKey { return p.key + "/normalised" }

// keepNormalised records the normalised scores for PreBind (explain only).
func (p *Score) keepNormalised(state fwk.CycleState, scores fwk.NodeScoreList) {
	if !p.explain {
		return
	}
	m := make(normScores, len(scores))
	for _, s := range scores {
		m[s.Name] = s.Score
	}
	state.Write(p.normKey(), m)
}

// preBindPreFlight is PreBindPreFlight's status (prebind*.go: the
// adapter per minor): nothing to do unless explain is on.
func (p *Score) preBindPreFlight(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	if !p.explain {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// PreBind writes the explanation of nodeName to the pod's annotation.
func (p *Score) PreBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if !p.explain {
		return nil
	}
	x, err := p.explanation(state, nodeName)
	if err != nil {
		return fwk.AsStatus(err)
	}
	val, err := json.Marshal(x)
	if err != nil {
		return fwk.AsStatus(err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ExplainAnnotation(p.name): string(val)}}})
	if err != nil {
		return fwk.AsStatus(err)
	}
	if _, err := p.h.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("writing %s on pod %s/%s: %w", ExplainAnnotation(p.name), pod.Namespace, pod.Name, err))
	}
	return nil
}

// explanation reads this cycle's raw and normalised scores.
func (p *Score) explanation(state fwk.CycleState, nodeName string) (*Explanation, error) {
	rd, err := state.Read(p.key)
	if err != nil { // one feasible node: the framework skipped scoring
		return &Explanation{Chosen: NodeExplanation{Node: nodeName}, Next: []NodeExplanation{}, Feasible: 1, Note: NotScored}, nil
	}
	raw := rd.(*scoreCycle).raw
	norm := normScores(raw) // a scorer without NormalizeScore state: raw scores
	if nd, err := state.Read(p.normKey()); err == nil {
		norm = nd.(normScores)
	}
	var all []NodeExplanation
	for n, s := range norm {
		all = append(all, NodeExplanation{Node: n, Raw: raw[n], Score: s})
	}
	slices.SortFunc(all, func(a, b NodeExplanation) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Node, b.Node))
	})
	x := &Explanation{Feasible: len(all), Next: []NodeExplanation{}}
	for _, ne := range all {
		switch {
		case ne.Node == nodeName:
			x.Chosen = ne
		case len(x.Next) < ExplainTop:
			x.Next = append(x.Next, ne)
		}
	}
	if x.Chosen.Node == "" {
		return nil, fmt.Errorf("%s: explain: node %s was not scored", p.name, nodeName)
	}
	return x, nil
}
