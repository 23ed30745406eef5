package experiment

import (
	"fmt"

	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/job"
)

// CheckOutlasts refuses, before a run, a run that must outlast the
// account's price or carbon series (an account that does not wrap): the
// run cannot end before atLeast (a job's submit time plus its shortest
// possible run), so its hourly energy reaches past the series' end and
// pricing it would fail after the whole run. what names the job that
// sets atLeast.
func CheckOutlasts(a *elgrid.Account, atLeast job.Time, what string) error {
	const hourMs = 3600 * 1000
	if a == nil || a.Wrap || atLeast <= 0 {
		return nil
	}
	hours := int((atLeast + hourMs - 1) / hourMs)
	if a.Wraps(hours) {
		return fmt.Errorf("%s cannot end before hour %d of the run, past the end of the price or carbon series (%s): the run could not be priced; shorten the workload or give a longer series (grid)",
			what, hours, a.Sources)
	}
	return nil
}
