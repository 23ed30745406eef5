package replay

import "github.com/wattsched/wattsched/hw"

// placerCatalog is the hardware catalog of the replay: the built-in one,
// as the scheduler plugins use (Check refuses scenario catalogs).
func placerCatalog() *hw.Catalog { return hw.Default() }
