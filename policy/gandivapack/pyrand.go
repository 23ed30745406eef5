package gandivapack

// pyRand is the Mersenne Twister (MT19937, Matsumoto and Nishimura 1998)
// seeded and drawn from as CPython's random.Random is: seed(n) for an
// integer n >= 0 keys init_by_array with n's 32-bit words, and sample(x,
// 2) of a short list draws indices with getrandbits. Gavel's
// GandivaPolicy pairs jobs with random.Random(seed).sample, so the same
// seed pairs the same jobs here (written from the published algorithm).
type pyRand struct {
	mt  [624]uint32
	idx int
}

func newPyRand(seed uint64) *pyRand {
	key := []uint32{uint32(seed)}
	if hi := uint32(seed >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &pyRand{}
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(624, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i, j = i+1, j+1
		if i >= 624 {
			r.mt[0], i = r.mt[623], 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0], i = r.mt[623], 1
		}
	}
	r.mt[0] = 0x80000000
	return r
}

func (r *pyRand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

func (r *pyRand) uint32() uint32 {
	if r.idx >= 624 {
		for k := 0; k < 624; k++ {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// below is random's _randbelow(n) for 0 < n < 2^32.
func (r *pyRand) below(n int) int {
	k := 0
	for v := n; v > 0; v >>= 1 {
		k++
	}
	for {
		x := int(r.uint32() >> (32 - k))
		if x < n {
			return x
		}
	}
}

// sample2 is random.sample(pop, 2) (len(pop) >= 2).
func (r *pyRand) sample2(pop []int) (int, int) {
	n := len(pop)
	if n <= 21 {
		pool := append([]int(nil), pop...)
		j := r.below(n)
		a := pool[j]
		pool[j] = pool[n-1]
		return a, pool[r.below(n-1)]
	}
	i := r.below(n)
	j := r.below(n)
	for j == i {
		j = r.below(n)
	}
	return pop[i], pop[j]
}
