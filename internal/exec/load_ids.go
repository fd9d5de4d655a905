package exec

import (
	"crypto/rand"
	"math"
	"math/bits"
	mrand "math/rand/v2"
	"time"
	"unsafe"

	"github.com/oklog/ulid/v2"
)

// loadIDs generates the ULIDs of a load's rows without an id. ulid.Make
// reads the clock for every id (a tenth of a bulk load's staging time at
// millions of edges); here the clock is read once per loadIDsPerClock ids,
// and ids within one millisecond reading are ordered as ulid's monotonic
// entropy orders them — the 80 random bits of the millisecond's first id,
// then each next id's bits the last's plus a random step in [1, 2³²−1) —
// so ids keep increasing in input order as they do with ulid.Make
// (TestLoadIDsIncrease). The random bits come from a ChaCha8 generator
// seeded from crypto/rand (ulid.Monotonic over crypto/rand read 4 bytes
// through a bufio.Reader per id), and only the 16 entropy characters are
// encoded per id: the 10 of the timestamp once per millisecond
// (TestLoadIDsMatchULIDText pins the text against ulid's).
type loadIDs struct {
	ms    uint64 // timestamp of the next id
	n     int
	rng   *mrand.ChaCha8
	entMs uint64   // millisecond hi, lo belong to (valid once started)
	hi    uint64   // top 16 of the last id's 80 entropy bits
	lo    uint64   // low 64 bits
	head  [10]byte // entMs encoded
	slab  []byte   // nextView's current slab
	begun bool
}

// loadIDsPerClock bounds how stale an id's timestamp can be: the time
// staging this many rows takes (well under a millisecond).
const loadIDsPerClock = 256

func newLoadIDs() *loadIDs {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return &loadIDs{rng: mrand.NewChaCha8(seed)}
}

// loadIDsSlab is the size of the byte slabs nextView carves ids from:
// small, so that one id kept of a slab pins little.
const loadIDsSlab = 1 << 10

// nextView is next without an allocation per id: the id is a view of a
// slab that is never written again once the id is carved from it. A
// holder that keeps the id long clones it (a slab is 39 ids).
func (g *loadIDs) nextView() string {
	if len(g.slab)+ulid.EncodedSize > cap(g.slab) {
		g.slab = make([]byte, 0, loadIDsSlab)
	}
	start := len(g.slab)
	g.slab = g.slab[:start+ulid.EncodedSize]
	b := g.slab[start:]
	g.fill(b)
	return unsafe.String(&b[0], len(b))
}

func (g *loadIDs) next() string {
	var b [ulid.EncodedSize]byte
	g.fill(b[:])
	return string(b[:])
}

// fill writes the next id's text to b (ulid.EncodedSize bytes).
func (g *loadIDs) fill(b []byte) {
	if g.n%loadIDsPerClock == 0 {
		g.ms = max(g.ms, ulid.Timestamp(time.Now()))
	}
	g.n++
	if !g.begun || g.entMs != g.ms {
		g.fresh(g.ms)
	} else {
		lo, carry := bits.Add64(g.lo, 1+g.rng.Uint64()%(math.MaxUint32-1), 0)
		if hi := g.hi + carry; hi <= 0xffff {
			g.hi, g.lo = hi, lo
		} else {
			// The entropy of this millisecond is used up (only after
			// ~2⁴⁸ ids): move to the next one, with fresh entropy.
			g.ms++
			g.fresh(g.ms)
		}
	}
	g.text(b)
}

// text writes the id of the current entropy to b: the encoded timestamp,
// then the 80 bits five at a time, most significant first. Each character
// is read from lo or hi at its own shift (bits 0–59 from lo, 60–64 across
// both, 65–79 from hi), not by shifting the 80 bits down one character
// after another: sixteen independent lookups instead of a chain.
func (g *loadIDs) text(b []byte) {
	b = b[:ulid.EncodedSize]
	copy(b[:10], g.head[:])
	hi, lo := g.hi, g.lo
	for k := range 12 {
		b[25-k] = crockford[(lo>>(5*k))&31]
	}
	b[13] = crockford[(lo>>60|hi<<4)&31]
	b[12] = crockford[(hi>>1)&31]
	b[11] = crockford[(hi>>6)&31]
	b[10] = crockford[(hi>>11)&31]
}

// fresh starts millisecond ms: new random entropy, its timestamp encoded.
func (g *loadIDs) fresh(ms uint64) {
	var id ulid.ULID
	if err := id.SetTime(ms); err != nil {
		// Past the year 10889: ulid.Make would panic too.
		panic(err)
	}
	var text [ulid.EncodedSize]byte
	_ = id.MarshalTextTo(text[:]) // exactly EncodedSize: cannot fail
	copy(g.head[:], text[:10])
	g.entMs, g.begun = ms, true
	g.hi, g.lo = g.rng.Uint64()&0xffff, g.rng.Uint64()
}

// crockford is the ULID text alphabet (Crockford's base32).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
