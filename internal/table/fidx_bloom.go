package table

import "math/bits"

// fidxBloom builds the Bloom filter of one fragment index section while
// its blocks are coded: the units (64-byte block, then 4 bytes for the
// CRC the encoder writes) in a scratch buffer reused from section to
// section, copied into the object once the section's keys are in.
//
// Keys are hashed four at a time (fnv64a4): FNV-1a is a chain of
// multiplications, one per byte, each waiting for the last, so one key at
// a time leaves the multiplier idle most cycles; four independent chains
// keep it busy. The bits set are exactly those of bloomBits per key
// (TestBloomBuilderMatchesBloomBits).
type fidxBloom struct {
	units  []byte
	blocks uint32
	mod    uint64 // fastModM(blocks)
	pend   [4]string
	n      int
}

// reset empties the filter for a section of blocks Bloom blocks.
func (b *fidxBloom) reset(blocks uint32) {
	size := int(blocks) * fidxBloomUnit
	if cap(b.units) < size {
		b.units = make([]byte, size)
	} else {
		b.units = b.units[:size]
		clear(b.units)
	}
	b.blocks, b.mod, b.n = blocks, fastModM(blocks), 0
}

// add adds key to the filter (hashed with the next three keys added, or
// by finish).
func (b *fidxBloom) add(key string) {
	b.pend[b.n] = key
	b.n++
	if b.n < len(b.pend) {
		return
	}
	x0, x1, x2, x3 := fnv64a4(b.pend[0], b.pend[1], b.pend[2], b.pend[3])
	b.set(x0)
	b.set(x1)
	b.set(x2)
	b.set(x3)
	b.n = 0
}

// finish adds the keys still pending and returns the units (valid until
// the next reset).
func (b *fidxBloom) finish() []byte {
	for _, k := range b.pend[:b.n] {
		b.set(fnv64a(k))
	}
	b.n = 0
	clear(b.pend[:]) // no key view outlives its section
	return b.units
}

// set sets the bits of the key whose hash is x: bloomBitsOf's, with the
// block's remainder taken by a multiplication (fastMod) instead of a
// division, and the block as an array (no bounds check per bit).
func (b *fidxBloom) set(x uint64) {
	blk := fastMod(uint32(x>>32), b.mod, b.blocks)
	h1, h2 := uint32(x), uint32(x>>32)|1
	u := (*[fidxBloomBlock]byte)(b.units[int(blk)*fidxBloomUnit:])
	for i := range uint32(fidxBloomProbe) {
		bit := (h1 + i*h2) % (fidxBloomBlock * 8)
		u[bit/8] |= 1 << (bit % 8)
	}
}

// fastModM is the multiplier fastMod needs for the divisor d (> 0).
func fastModM(d uint32) uint64 {
	if d == 0 {
		return 0
	}
	return ^uint64(0)/uint64(d) + 1
}

// fastMod is a % d for m = fastModM(d): Lemire, Kaser and Kurz, "Faster
// remainder by direct computation" (2019), exact for every 32-bit a and
// d (TestFastModMatchesMod).
func fastMod(a uint32, m uint64, d uint32) uint32 {
	hi, _ := bits.Mul64(m*uint64(a), uint64(d))
	return uint32(hi)
}

// fnv64a4 is fnv64a of four strings, computed side by side over their
// common length and then each to its end.
func fnv64a4(a, b, c, d string) (uint64, uint64, uint64, uint64) {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	xa, xb, xc, xd := uint64(offset64), uint64(offset64), uint64(offset64), uint64(offset64)
	n := min(len(a), len(b), len(c), len(d))
	ha, hb, hc, hd := a[:n], b[:n], c[:n], d[:n]
	for i := range len(ha) {
		xa = (xa ^ uint64(ha[i])) * prime64
		xb = (xb ^ uint64(hb[i])) * prime64
		xc = (xc ^ uint64(hc[i])) * prime64
		xd = (xd ^ uint64(hd[i])) * prime64
	}
	return fnv64aFrom(xa, a[n:]), fnv64aFrom(xb, b[n:]), fnv64aFrom(xc, c[n:]), fnv64aFrom(xd, d[n:])
}

// fnv64aFrom continues an FNV-1a 64 hash x over s.
func fnv64aFrom(x uint64, s string) uint64 {
	const prime64 = 1099511628211
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= prime64
	}
	return x
}
