package cli

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/alibaba2023"
	"github.com/wattsched/wattsched/trace/philly"
	"github.com/wattsched/wattsched/userfile"
)

// phillyFlags are 'traces philly's flags (commands.go).
type phillyFlags struct {
	table, from, out string
	days, minGPUs    int
	shape            philly.PodShape
	force            bool
}

// cmdTracesPhilly writes the jobs of a Pollux-format Philly table
// submitted in a window of days as an openb pod list, multi-machine jobs
// as gangs (philly.Pods).
func cmdTracesPhilly(f phillyFlags, stdout io.Writer) error {
	switch {
	case f.table == "" || f.out == "" || f.from == "":
		return usageError{fmt.Errorf("traces philly: --table, --from and -o are required")}
	case f.days < 1 || f.days > 366:
		return usageError{fmt.Errorf("traces philly: --days %d, want 1..366", f.days)}
	case f.minGPUs < 1 || f.minGPUs > philly.MaxGPUs:
		return usageError{fmt.Errorf("traces philly: --min-gpus %d, want 1..%d", f.minGPUs, philly.MaxGPUs)}
	}
	start, err := time.Parse(philly.Layout, f.from+" 00:00:00")
	if err != nil {
		return usageError{fmt.Errorf("traces philly: --from %q, want YYYY-MM-DD", f.from)}
	}
	if _, err := outdir.CheckFile(f.out, f.force); err != nil {
		return fmt.Errorf("traces philly: %w", err)
	}
	r, err := userfile.Open(f.table, userfile.Table)
	if err != nil {
		return fmt.Errorf("traces philly: %w", err)
	}
	defer r.Close()
	all, err := philly.Read(r, f.table, start)
	if err != nil {
		return fmt.Errorf("traces philly: %w", err)
	}
	var jobs []trace.GPUJob
	for _, j := range all {
		if j.SubmitSec >= 0 && j.SubmitSec < float64(f.days)*86400 && j.GPUs >= f.minGPUs {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		return fmt.Errorf("traces philly: %s: no job of at least %d GPUs submitted in the %d days from %s", f.table, f.minGPUs, f.days, f.from)
	}
	pods, err := philly.Pods(jobs, f.shape)
	if err != nil {
		return fmt.Errorf("traces philly: %s: %w", f.table, err)
	}
	var buf bytes.Buffer
	if err := alibaba2023.WritePods(&buf, pods); err != nil {
		return fmt.Errorf("traces philly: %w", err)
	}
	if err := outdir.WriteFile(f.out, buf.Bytes(), f.force); err != nil {
		return fmt.Errorf("traces philly: %w", err)
	}
	gangs := map[string]bool{}
	for _, p := range pods {
		if p.Gang != "" {
			gangs[p.Gang] = true
		}
	}
	fmt.Fprintf(stdout, "%d jobs, %d pods, %d gangs in %s\n", len(jobs), len(pods), len(gangs), f.out)
	return nil
}
