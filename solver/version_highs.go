//go:build highs

package solver

// #cgo pkg-config: highs
// #include "HConfig.h"
// static const char *wattsched_highs_githash(void) { return HIGHS_GITHASH; }
import "C"

import "fmt"

// Version is the linked HiGHS library's version and git hash, from the
// headers it was built with (HConfig.h), e.g. "1.3.1 (git 14c0f2256)";
// "" in a build without HiGHS.
func Version() string {
	return fmt.Sprintf("%d.%d.%d (git %s)", C.HIGHS_VERSION_MAJOR, C.HIGHS_VERSION_MINOR, C.HIGHS_VERSION_PATCH, C.GoString(C.wattsched_highs_githash()))
}
