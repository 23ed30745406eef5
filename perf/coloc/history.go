package coloc

import (
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/trace/gavel"
)

// History is EaCO's H (Algorithm 1 line 1): the experimental measurements
// a scheduler starts with (measured pair factors), the records it adds
// while running (factors observed for whole co-located sets), and an
// estimator for combinations it has not seen (Fitted). It never sees the
// simulator's ground truth.
type History struct {
	known *Factors
	est   *Fitted
	// model, when set, predicts every set not recorded (NewModelHistory).
	model SetFunc
	rec   map[string][]float64
	// mean, when set, makes a recorded set's prediction the mean of every
	// observation of it (NewLearningHistory); else the latest.
	mean bool
	n    map[string]int
	// Observations counts the observations recorded.
	Observations int
	// Lookups counts predictions by source: a recorded set, measured
	// pairs only, at least one estimated pair, or the set model.
	FromRecord, FromPairs, FromEstimate, FromModel int
}

// NewHistory starts a history from measured pairs and an estimator.
func NewHistory(known *Factors, est *Fitted) *History {
	return &History{known: known, est: est, rec: map[string][]float64{}}
}

// NewModelHistory starts a history whose experimental measurements are a
// set model (the EaCO paper's own co-location figures, PaperInterference):
// sets not yet observed are predicted by model.
func NewModelHistory(model SetFunc) *History {
	return &History{model: model, rec: map[string][]float64{}}
}

// NewLearningHistory starts a history from prior (what profiling gives,
// e.g. PaperInterference.Profiled) that learns from noisy observations:
// a set observed before is predicted by the mean of its observations, a
// set never observed by prior.
func NewLearningHistory(prior SetFunc) *History {
	return &History{model: prior, rec: map[string][]float64{}, mean: true, n: map[string]int{}}
}

// order sorts the members of set by key into idx (len(set) long) and
// returns the set's signature: its keys in that order.
func order(set []gavel.Key, idx []int) string {
	n := 0
	for i := range set {
		idx[i] = i
		n += len(set[i].Type) + 4
	}
	for i := 1; i < len(idx); i++ { // insertion sort: sets are small
		for k := i; k > 0 && cmpKey(set[idx[k]], set[idx[k-1]]) < 0; k-- {
			idx[k], idx[k-1] = idx[k-1], idx[k]
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, i := range idx {
		sb.WriteString(set[i].Type)
		sb.WriteByte('#')
		sb.WriteString(strconv.Itoa(set[i].Scale))
		sb.WriteByte('|')
	}
	return sb.String()
}

func cmpKey(a, b gavel.Key) int {
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return a.Scale - b.Scale
}

// Predict returns each member's predicted factor in set: a recorded set
// first, else the set model of a NewModelHistory (0 for every member of a
// set it has no value for), else the multiplicative rule over measured
// pairs, estimating the pairs never measured.
func (h *History) Predict(set []gavel.Key) []float64 {
	if len(set) == 1 {
		return []float64{1}
	}
	var buf [8]int
	idx := buf[:len(set)]
	if len(set) > len(buf) {
		idx = make([]int, len(set))
	}
	sig := order(set, idx)
	if r, ok := h.rec[sig]; ok {
		h.FromRecord++
		out := make([]float64, len(set))
		for k, i := range idx {
			out[i] = r[k]
		}
		return out
	}
	if h.model != nil {
		h.FromModel++
		f, ok := h.model(set)
		if !ok {
			f = make([]float64, len(set)) // unknown: predicted not to progress
		}
		return f
	}
	estimated := false
	pair := func(a, b gavel.Key) (float64, bool) {
		if x, ok := h.known.Pair(a, b); ok {
			return x, true
		}
		estimated = true
		return h.est.Pair(a, b)
	}
	f, _ := SetFactors(pair, set)
	if estimated {
		h.FromEstimate++
	} else {
		h.FromPairs++
	}
	return f
}

// Record stores observed factors of a co-located set.
func (h *History) Record(set []gavel.Key, factors []float64) {
	if len(set) < 2 {
		return
	}
	idx := make([]int, len(set))
	sig := order(set, idx)
	h.Observations++
	r := make([]float64, len(set))
	for k, i := range idx {
		r[k] = factors[i]
	}
	if old, ok := h.rec[sig]; ok && h.mean {
		c := float64(h.n[sig])
		for k := range r {
			r[k] = (old[k]*c + r[k]) / (c + 1)
		}
	}
	if h.mean {
		h.n[sig]++
	}
	h.rec[sig] = r
}

// Records is the number of recorded sets.
func (h *History) Records() int { return len(h.rec) }

// StandIn names the paper model (Table 2 row) whose GPU core and memory
// utilisation a Gavel job type borrows: the paper measured only its four
// CNNs. ResNet-18 and ResNet-50 map to themselves; the heavy Transformer
// and CycleGAN to VGG-16 (the highest row); LM to ResNet-50; the light,
// input-bound Recommendation and A3C to AlexNet (the lowest row).
func StandIn(jobType string) string {
	switch {
	case strings.HasPrefix(jobType, "ResNet-18"):
		return "ResNet-18"
	case strings.HasPrefix(jobType, "ResNet-50"), strings.HasPrefix(jobType, "LM"):
		return "ResNet-50"
	case strings.HasPrefix(jobType, "Transformer"), strings.HasPrefix(jobType, "CycleGAN"):
		return "VGG-16"
	default:
		return "AlexNet"
	}
}

// PaperGavelType is the Gavel type that stands for each paper model in the
// rule test: the paper trained with the reference batch of 256 over 8 GPUs
// (32 per GPU) for the ResNets; AlexNet and VGG-16 are not in Gavel's
// table, so the lightest and a heavy convolutional type stand in.
var PaperGavelType = map[string]gavel.Key{
	"AlexNet":   {Type: "ResNet-18 (batch size 16)", Scale: 1},
	"ResNet-18": {Type: "ResNet-18 (batch size 32)", Scale: 1},
	"ResNet-50": {Type: "ResNet-50 (batch size 32)", Scale: 1},
	"VGG-16":    {Type: "ResNet-50 (batch size 64)", Scale: 1},
}
