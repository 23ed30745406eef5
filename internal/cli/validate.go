package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/experiment/validate"
)

// validateCmd is `validate`, whose one check is `validate power`: the
// power models against public power measurements.
func (a *app) validateCmd() *cobra.Command {
	c := &cobra.Command{Use: "validate power -o DIR [flags]",
		Short: "check the power models against public power measurements",
		Long: `Check wattsched's power models against public measured power: each model's
prediction for every measurement it covers, and its error per model, GPU model
and workload (docs/power-models.md).`,
		Example: "  wattsched validate power -o out/validate-power",
		Args:    noArgs}
	st := &validate.Study{}
	p := &cobra.Command{Use: "power -o DIR [--traces DIR] [--force]",
		Short: "check the power models against public power measurements (Zeus, Perseus, per-device V100 data)",
		Long: `Predict every public power measurement found under --traces with each power
model that covers it and report, per model, GPU model and workload, the mean
absolute percentage error, the signed bias, the 95th-percentile absolute error
and the number of points: printed, in errors.csv and points.csv, and in
report.html with predicted-vs-measured plots. What no public measurement can
check is listed as untested. --traces defaults to ../shared/traces, relative to
the working directory (the repository root); point it at any folder holding
zeus-nsdi23/, perseus-sosp24-dvfs/ and gpu-variability-pal/ as published
(docs/power-models.md).`,
		Example: `  wattsched validate power -o out/validate-power
  wattsched validate power -o out/vp --traces /data/traces --force`,
		DisableFlagsInUseLine: true, Args: noArgs}
	fs := p.Flags()
	out := fs.StringP("o", "o", "", "results directory (required)")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	fs.AddGoFlagSet(studyFlagSet(st))
	p.MarkFlagDirname("o")
	p.RunE = func(*cobra.Command, []string) error {
		return cmdValidate(a.ctx, st, *out, *force, a.stdout, a.stderr)
	}
	c.AddCommand(p)
	return c
}

// cmdValidate runs a validation study: a check before any work, the run,
// the results published at once into DIR.
func cmdValidate(ctx context.Context, st experiment.Study, out string, force bool, stdout, stderr io.Writer) error {
	if out == "" {
		return usageError{fmt.Errorf("validate %s: -o DIR is required", st.Name())}
	}
	if err := st.Check(); err != nil {
		return usageError{err}
	}
	claim, err := outdir.ClaimDir(out, force)
	if err != nil {
		return err
	}
	defer claim.Release()
	results, err := st.Run(ctx, env(stderr))
	if err != nil {
		return err
	}
	return emit(stdout, claim, results)
}
