package policy

// Uncached makes p score every node at every placement, with neither the
// score cache nor the index: the reference the cache tests compare with.
func (p *Placer) Uncached() { p.cached = false }

// MaxClasses is maxClasses.
const MaxClasses = maxClasses
