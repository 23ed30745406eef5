package experiment

import (
	"strings"
	"testing"

	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/job"
)

// The embedded series cover 8,760 hours from 2023-01-01: a run that
// cannot end before hour 8,760 fits, one that cannot end before hour
// 8,761 (one millisecond into it) does not, unless the account wraps.
func TestCheckOutlasts(t *testing.T) {
	a, err := elgrid.NewAccount(elgrid.DefaultRegion, elgrid.DefaultStart, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	const h = job.Time(3600 * 1000)
	for _, tc := range []struct {
		at   job.Time
		wrap bool
		want string
	}{
		{0, false, ""}, {h, false, ""}, {8760 * h, false, ""},
		{8760*h + 1, false, "cannot end before hour 8761"},
		{8760*h + 1, true, ""},
	} {
		a.Wrap = tc.wrap
		err := CheckOutlasts(a, tc.at, "job x")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("at %d ms, wrap %v: %v, want %q", tc.at, tc.wrap, err, tc.want)
		}
	}
}
