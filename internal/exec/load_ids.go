package exec

import (
	"crypto/rand"
	"time"
	"unsafe"

	"github.com/oklog/ulid/v2"
)

// loadIDs generates the ULIDs of a load's rows without an id. ulid.Make
// reads the clock for every id (a tenth of a bulk load's staging time at
// millions of edges); here the clock is read once per loadIDsPerClock ids,
// and ids within one millisecond reading are ordered by a monotonic
// entropy source, so ids keep increasing in input order as they do with
// ulid.Make (TestLoadIDsIncrease).
type loadIDs struct {
	ms      uint64
	n       int
	entropy *ulid.MonotonicEntropy
	slab    []byte // nextView's current slab
	buf     [16]byte
}

// loadIDsPerClock bounds how stale an id's timestamp can be: the time
// staging this many rows takes (well under a millisecond).
const loadIDsPerClock = 256

func newLoadIDs() *loadIDs {
	return &loadIDs{entropy: ulid.Monotonic(rand.Reader, 0)}
}

// loadIDsSlab is the size of the byte slabs nextView carves ids from:
// small, so that one id kept of a slab pins little.
const loadIDsSlab = 1 << 10

// nextView is next without an allocation per id: the id is a view of a
// slab that is never written again once the id is carved from it. A
// holder that keeps the id long clones it (a slab is 39 ids).
func (g *loadIDs) nextView() string {
	id := g.make()
	if len(g.slab)+ulid.EncodedSize > cap(g.slab) {
		g.slab = make([]byte, 0, loadIDsSlab)
	}
	start := len(g.slab)
	g.slab = g.slab[:start+ulid.EncodedSize]
	b := g.slab[start:]
	_ = id.MarshalTextTo(b) // b is exactly EncodedSize: cannot fail
	return unsafe.String(&b[0], len(b))
}

func (g *loadIDs) next() string {
	id := g.make()
	return id.String()
}

// make returns the next id.
func (g *loadIDs) make() ulid.ULID {
	if g.n%loadIDsPerClock == 0 {
		g.ms = max(g.ms, ulid.Timestamp(time.Now()))
	}
	g.n++
	// ulid.New would take the entropy as an io.Reader, which makes every
	// id escape to the heap; MonotonicRead's slice escapes too, so the
	// entropy is read into g's own buffer.
	if err := g.entropy.MonotonicRead(g.ms, g.buf[6:]); err != nil {
		// The entropy of this millisecond is used up (only after ~2^48
		// ids): move to the next one, which draws fresh entropy.
		g.ms++
		return ulid.MustNew(g.ms, g.entropy)
	}
	id := ulid.ULID(g.buf)
	if err := id.SetTime(g.ms); err != nil {
		// Past the year 10889: ulid.Make would panic too.
		panic(err)
	}
	return id
}
