package coloc

import (
	"fmt"
	"math"

	"github.com/wattsched/wattsched/trace/bloxpal"
	"github.com/wattsched/wattsched/trace/gavel"
)

// blox-pal (trace/bloxpal) measured pairs of DL training jobs sharing the
// same GPUs on other hardware and software than Gavel's V100 table: data
// the interference model was not built on. Its normalised speeds are
// fractions of the fastest isolated configuration of the same model on
// the same GPU count (trace/bloxpal/data/README.md), so a job's factor
// is its co-located speed over the normalised isolated speed of the same
// configuration.

// BloxPalIsolated is each configuration's isolated speed as norm_speed.csv
// normalises it: its raw_single.csv speed over the fastest configuration
// of the same model, dataset and GPU count (0 for a run that failed).
func BloxPalIsolated(singles []bloxpal.Single) map[bloxpal.Config]float64 {
	type group struct {
		model, dataset string
		gpus           int
	}
	best := map[group]float64{}
	for _, s := range singles {
		g := group{s.Model, s.Dataset, s.GPUs}
		best[g] = math.Max(best[g], s.Speed)
	}
	out := make(map[bloxpal.Config]float64, len(singles))
	for _, s := range singles {
		if b := best[group{s.Model, s.Dataset, s.GPUs}]; b > 0 {
			out[s.Config] = s.Speed / b
		} else {
			out[s.Config] = 0
		}
	}
	return out
}

// BloxPalTable is blox-pal's pairs in Gavel's shape, for Split, Fit,
// Evaluate and CrossValidate: every configuration has isolated rate 1
// and a pair's rates are its jobs' factors (co-located speed over the
// isolated speed of the same configuration, at most 1). A job type is a
// configuration without its GPU count (bloxpal.Config.Type), the scale its
// GPU count, so the estimator, which keys on the type, pools a model's
// runs on different GPU counts.
type BloxPalTable struct {
	Table  *gavel.Throughputs
	Config map[gavel.Key]bloxpal.Config
	// Rows counts the rows of two jobs; Used the pairs kept; NotRun the
	// rows with a zero speed (not run or failed); NoReference those where
	// a job has no isolated row of the same configuration (GPT2 family:
	// global batch 256 co-located, 512 alone); Clipped the factors above
	// 1 set to 1.
	Rows, Used, NotRun, NoReference, Clipped int
}

func bloxKey(c bloxpal.Config) gavel.Key { return gavel.Key{Type: c.Type(), Scale: c.GPUs} }

// NewBloxPalTable converts the measurements. A pair of one configuration
// with itself gets the mean of its two jobs' factors (Gavel's table has
// one factor for such a pair). norm_speed.csv gives no strategy for the
// second job (always a CNN-type model there), so it is matched to the
// isolated row with strategy NA.
func NewBloxPalTable(d *bloxpal.Data) (*BloxPalTable, error) {
	iso := BloxPalIsolated(d.Singles)
	t := &BloxPalTable{Config: map[gavel.Key]bloxpal.Config{}}
	isolated := map[gavel.Key]float64{}
	var pairs []gavel.Pair
	for _, r := range d.Rows {
		if r.Alone {
			continue
		}
		t.Rows++
		if r.SpeedA == 0 || r.SpeedB == 0 {
			t.NotRun++
			continue
		}
		b := r.B
		if b.Strategy == "" {
			b.Strategy = bloxpal.NA
		}
		ia, ib := iso[r.A], iso[b]
		if ia == 0 || ib == 0 {
			t.NoReference++
			continue
		}
		fa, fb := r.SpeedA/ia, r.SpeedB/ib
		if fa > 1 {
			fa = 1
			t.Clipped++
		}
		if fb > 1 {
			fb = 1
			t.Clipped++
		}
		ka, kb := bloxKey(r.A), bloxKey(b)
		if ka == kb {
			fa = (fa + fb) / 2
			fb = fa
		}
		t.Config[ka], t.Config[kb] = r.A, b
		isolated[ka], isolated[kb] = 1, 1
		pairs = append(pairs, gavel.Pair{A: ka, B: kb, RateA: fa, RateB: fb})
	}
	t.Used = len(pairs)
	tp, err := gavel.NewThroughputs("blox-pal", isolated, pairs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bloxpal.EmbeddedPairs, err)
	}
	t.Table = tp
	return t, nil
}

// BloxPalGavel names the Gavel job type each blox-pal model is compared
// with: resnet50 at batch 32 per GPU on ImageNet is Gavel's ResNet-50
// (batch size 32), the same model and batch; vgg19 has no Gavel
// counterpart and is played by the type that plays VGG-16 in the Fig. 1
// rule test (PaperGavelType), a stand-in. DCGAN, PointNet and the
// Megatron models have none.
var BloxPalGavel = map[string]struct {
	Type    string
	StandIn bool
}{
	"resnet50": {"ResNet-50 (batch size 32)", false},
	"vgg19":    {PaperGavelType["VGG-16"].Type, true},
}

// GavelVsBloxPal is one job's factor next to a co-tenant as blox-pal
// measured it and as the Gavel-built model predicts it.
type GavelVsBloxPal struct {
	Job       string  `json:"job"`
	With      string  `json:"with"`
	GavelJob  string  `json:"gavel_job"`
	GavelWith string  `json:"gavel_with"`
	StandIn   bool    `json:"stand_in"`
	Measured  float64 `json:"blox_pal_factor"`
	Predicted float64 `json:"gavel_model_factor"`
}

// BloxPalCheck is the interference model checked against blox-pal.
type BloxPalCheck struct {
	Rows        int `json:"pair_rows"`
	Pairs       int `json:"pairs_used"`
	NotRun      int `json:"rows_not_run"`
	NoReference int `json:"rows_without_isolated_reference"`
	Clipped     int `json:"factors_clipped_to_1"`
	// HeldOut is the estimator's form fitted to blox-pal's pairs less
	// every every-th pair of two different configurations, evaluated on
	// those; Folds the same for each of 5 folds.
	HeldOut HeldOutError   `json:"held_out"`
	Folds   []HeldOutError `json:"five_fold"`
	// Gavel compares the Gavel-built model (H as the policies get it)
	// with blox-pal for the pairs whose models have a Gavel type:
	// GavelMAPEPct over the same-model ones, StandInMAPEPct over those
	// with a stand-in.
	Gavel          []GavelVsBloxPal `json:"gavel_model_vs_blox_pal"`
	GavelMAPEPct   float64          `json:"gavel_same_model_mape_pct"`
	StandInMAPEPct float64          `json:"gavel_stand_in_mape_pct"`
}

// CheckBloxPal runs both checks: the estimator's form on blox-pal alone
// (held out as Split does with every), and h's predictions (the Gavel
// model) for the blox-pal pairs of models that Gavel has.
func CheckBloxPal(d *bloxpal.Data, h *History, every int) (BloxPalCheck, error) {
	t, err := NewBloxPalTable(d)
	if err != nil {
		return BloxPalCheck{}, err
	}
	c := BloxPalCheck{Rows: t.Rows, Pairs: t.Used, NotRun: t.NotRun, NoReference: t.NoReference, Clipped: t.Clipped}
	train, held := Split(t.Table, every)
	c.HeldOut = Evaluate(Fit(MeasuredFactors(t.Table, train)), t.Table, held)
	c.Folds = CrossValidate(t.Table, 5)
	var n, ns float64
	for _, p := range t.Table.Pairs {
		ca, cb := t.Config[p.A], t.Config[p.B]
		ga, oka := BloxPalGavel[ca.Model]
		gb, okb := BloxPalGavel[cb.Model]
		if !oka || !okb || ca.Batch != "32" || cb.Batch != "32" || ca.Dataset != "ImageNet" || cb.Dataset != "ImageNet" {
			continue
		}
		ka, kb := gavel.Key{Type: ga.Type, Scale: ca.GPUs}, gavel.Key{Type: gb.Type, Scale: cb.GPUs}
		pred := h.Predict([]gavel.Key{ka, kb})
		dirs := [][2]int{{0, 1}, {1, 0}}
		if p.A == p.B {
			dirs = dirs[:1]
		}
		for _, dd := range dirs {
			keys, cfgs, meas := [2]gavel.Key{ka, kb}, [2]bloxpal.Config{ca, cb}, [2]float64{p.RateA, p.RateB}
			g := GavelVsBloxPal{Job: cfgs[dd[0]].String(), With: cfgs[dd[1]].String(), GavelJob: keys[dd[0]].String(), GavelWith: keys[dd[1]].String(),
				StandIn: ga.StandIn || gb.StandIn, Measured: meas[dd[0]], Predicted: pred[dd[0]]}
			c.Gavel = append(c.Gavel, g)
			e := 100 * math.Abs(g.Predicted-g.Measured) / g.Measured
			if g.StandIn {
				c.StandInMAPEPct += e
				ns++
			} else {
				c.GavelMAPEPct += e
				n++
			}
		}
	}
	if n > 0 {
		c.GavelMAPEPct /= n
	}
	if ns > 0 {
		c.StandInMAPEPct /= ns
	}
	return c, nil
}
