package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/calibrate"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/trace/k8sdump"
	"github.com/wattsched/wattsched/userfile"
)

// calibrateOptions are calibrate's flags.
type calibrateOptions struct {
	url, rng, from, out, save, curve, pods *string
	force                                  *bool
	timeout                                *time.Duration
	o                                      calibrate.Options
}

// calibrateFlags registers calibrate's flags on fs.
func calibrateFlags(fs *pflag.FlagSet) *calibrateOptions {
	f := &calibrateOptions{o: calibrate.Default()}
	o := &f.o
	f.url = fs.String("prometheus", "", "Prometheus server to query (http://host:9090)")
	f.rng = fs.String("range", "", "START,END[,STEP] of the range query: RFC 3339 times or Unix seconds, STEP a duration (default 15s)")
	f.from = fs.String("from", "", "a saved /api/v1/query_range JSON result of the calibration query (instead of --prometheus)")
	f.out = fs.StringP("o", "o", "", "catalog file to write (required)")
	f.save = fs.String("save", "", "with --prometheus: also write the server's answer to FILE (for --from, or a scenario's measured section)")
	f.force = fs.Bool("force", false, "replace an existing file")
	f.curve = fs.String("curve", "", "inner breakpoints of a piecewise curve over utilisation (or allocated share with --pods), e.g. 0.25,0.5,0.75 (default: a straight line from idle to full power)")
	f.pods = fs.String("pods", "", "a 'kubectl get pods -A -o json' (or nodes,pods) dump: fit power over the GPU share allocated to the pods that ran, not over utilisation")
	fs.StringVar(&o.NodeLabel, "node-label", o.NodeLabel, "with --pods: the power series' label holding the Kubernetes node name")
	fs.StringVar(&o.GPULabel, "gpu-label", o.GPULabel, "with --pods: the power series' label holding the GPU index (as in wattsched.io/gpu-index)")
	fs.StringVar(&o.PowerMetric, "power-metric", o.PowerMetric, "power series (W)")
	fs.StringVar(&o.UtilMetric, "util-metric", o.UtilMetric, "utilisation series (percent)")
	fs.StringVar(&o.ModelLabel, "model-label", o.ModelLabel, "label holding the GPU model")
	fs.StringVar(&o.Suffix, "suffix", o.Suffix, "appended to each model's name in the catalog")
	f.timeout = fs.Duration("timeout", 30*time.Second, "bound on the range query")
	return f
}

// cmdCalibrate fits GPU power models from measured DCGM series, read from
// a Prometheus server or a saved range-query result, and writes them as a
// bring-your-own-hardware catalog file. Power is fitted over utilisation,
// or with --pods over the GPU share allocated to the pods that ran.
func cmdCalibrate(ctx context.Context, f *calibrateOptions, args []string, stdout io.Writer) error {
	url, rng, from, out, save, force, curve, pods, timeout := f.url, f.rng, f.from, f.out, f.save, f.force, f.curve, f.pods, f.timeout
	o := f.o
	if len(args) > 0 || *out == "" || (*url == "") == (*from == "") || (*url != "") != (*rng != "") {
		return usageError{errors.New("calibrate: want --prometheus URL --range START,END[,STEP] or --from query.json, and -o catalog.yaml")}
	}
	if *save != "" && *url == "" {
		return usageError{errors.New("calibrate --save: only with --prometheus (--from reads a saved answer already)")}
	}
	knots, err := parseKnots(*curve)
	if err != nil {
		return usageError{fmt.Errorf("calibrate --curve: %w", err)}
	}
	o.Knots = knots
	if err := checkOutFile(*out, *force); err != nil {
		return err
	}
	if *save != "" {
		if err := checkOutFile(*save, *force); err != nil {
			return err
		}
		if abs(*save) == abs(*out) {
			return usageError{errors.New("calibrate: --save and -o name the same file")}
		}
	}
	var runs *k8sdump.Runs
	if *pods != "" {
		f, err := userfile.Open(*pods, userfile.Document)
		if err != nil {
			return err
		}
		runs, err = k8sdump.ReadRuns(f, *pods)
		f.Close()
		if err != nil {
			return err
		}
		o.AllocFrom = *pods
	}
	var series []prom.Series
	var answer []byte
	if *from != "" {
		b, err := userfile.ReadFile(*from, userfile.Document)
		if err != nil {
			return err
		}
		if series, err = prom.ParseRange(b); err != nil {
			return fmt.Errorf("%s: %w", *from, err)
		}
		o.From = *from
	} else {
		start, end, step, err := parseRange(*rng)
		if err != nil {
			return usageError{fmt.Errorf("calibrate --range: %w", err)}
		}
		c, err := prom.NewClient(*url, *timeout)
		if err != nil {
			return usageError{fmt.Errorf("calibrate --prometheus: %w", err)}
		}
		if series, answer, err = c.QueryRangeRaw(ctx, o.Query(), start, end, step); err != nil {
			return fmt.Errorf("%s: %w", *url, err)
		}
		o.From = fmt.Sprintf("%s %s..%s step %s", *url, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), step)
	}
	var fits []calibrate.ModelFit
	var unpaired calibrate.Unpaired
	header := fmt.Sprintf("GPU power models calibrated by wattsched calibrate from %s (query %s).\nAdd them with `wattsched run --catalog FILE` or a scenario's `catalog: FILE`; name them in a node list.", o.From, o.Query())
	rangeCol := "util range"
	if runs != nil {
		fits, unpaired, err = calibrate.FitAllocated(series, runs, o, hw.Default())
		header = fmt.Sprintf("GPU power models calibrated by wattsched calibrate from %s (query %s), over the GPU share\nallocated to the pods of %s (%d GPU pods that ran).\nAdd them with `wattsched run --catalog FILE` or a scenario's `catalog: FILE`; name them in a node list.", o.From, o.Query(), *pods, len(runs.Runs))
		rangeCol = "share range"
	} else {
		fits, err = calibrate.Fit(series, o, hw.Default())
	}
	if err != nil {
		return err
	}
	doc, err := calibrate.CatalogYAML(fits, header)
	if err != nil {
		return err
	}
	if *save != "" {
		if err := writeOutFile(*save, answer, *force); err != nil {
			return err
		}
	}
	if err := writeOutFile(*out, doc, *force); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\tcatalog name\tGPUs\tsamples\t%s\tidle W\tfull W\tRMSE W\tMAPE %%\t\n", rangeCol)
	for _, f := range fits {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f-%.0f%%\t%.1f\t%.1f\t%.2f\t%.2f\t\n", f.Model, f.Name, f.GPUs, f.Samples,
			f.UtilMin*100, f.UtilMax*100, f.GPU.IdleW, f.GPU.TDPW, f.RMSEW, f.MAPE)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unpaired.OtherNode > 0 {
		fmt.Fprintf(stdout, "left out %d power samples of nodes %s has no pod or Node item for (%s; label %s)\n", unpaired.OtherNode, *pods, strings.Join(unpaired.OtherNodes, ", "), o.NodeLabel)
	}
	if unpaired.Unknown > 0 {
		fmt.Fprintf(stdout, "left out %d power samples taken while a GPU pod without %s ran on the node (its GPUs unknown)\n", unpaired.Unknown, k8sdump.AnnGPUIndex)
	}
	if *save != "" {
		fmt.Fprintf(stdout, "wrote %s (the range query's answer, %d series)\n", *save, len(series))
	}
	fmt.Fprintf(stdout, "wrote %s (%d GPU models)\n", *out, len(fits))
	return nil
}

// abs is path made absolute (path itself when that fails), to compare
// two output names.
func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// checkOutFile checks an output file before any work by the rules every
// output file follows (outdir.CheckFile).
func checkOutFile(path string, force bool) error {
	_, err := outdir.CheckFile(path, force)
	return err
}

// writeOutFile writes data to path by those rules, checked again: through
// a synced temporary file beside it, never over a file that appeared
// since the check without force, never through a symbolic link.
func writeOutFile(path string, data []byte, force bool) error {
	return outdir.WriteFile(path, data, force)
}

func parseKnots(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0 && v < 1) || (i > 0 && v <= out[i-1]) {
			return nil, fmt.Errorf("item %d %q: want increasing fractions strictly between 0 and 1", i+1, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseRange reads START,END[,STEP].
func parseRange(s string) (start, end time.Time, step time.Duration, err error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 3 {
		return start, end, 0, fmt.Errorf("%q: want START,END[,STEP]", s)
	}
	if start, err = parseTime(parts[0]); err != nil {
		return start, end, 0, fmt.Errorf("START: %w", err)
	}
	if end, err = parseTime(parts[1]); err != nil {
		return start, end, 0, fmt.Errorf("END: %w", err)
	}
	step = 15 * time.Second
	if len(parts) == 3 {
		if step, err = time.ParseDuration(strings.TrimSpace(parts[2])); err != nil || step <= 0 {
			return start, end, 0, fmt.Errorf("STEP %q: want a positive duration such as 15s", parts[2])
		}
	}
	if !end.After(start) {
		return start, end, 0, fmt.Errorf("END %s is not after START %s", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	if end.Sub(start)/step > 11000 {
		return start, end, 0, fmt.Errorf("%s / %s is over 11,000 points, Prometheus's limit: use a larger STEP", end.Sub(start), step)
	}
	return start, end, step, nil
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		sec, frac := splitSeconds(v)
		return time.Unix(sec, frac).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, fmt.Errorf("%q: want RFC 3339 (2026-11-22T19:00:00Z) or Unix seconds", s)
	}
	return t, nil
}

func splitSeconds(v float64) (int64, int64) {
	sec := int64(v)
	return sec, int64((v - float64(sec)) * 1e9)
}
