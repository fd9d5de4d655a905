package exec

import (
	"crypto/rand"
	"time"

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
}

// loadIDsPerClock bounds how stale an id's timestamp can be: the time
// staging this many rows takes (well under a millisecond).
const loadIDsPerClock = 256

func newLoadIDs() *loadIDs {
	return &loadIDs{entropy: ulid.Monotonic(rand.Reader, 0)}
}

func (g *loadIDs) next() string {
	if g.n%loadIDsPerClock == 0 {
		g.ms = max(g.ms, ulid.Timestamp(time.Now()))
	}
	g.n++
	// ulid.New would take the entropy as an io.Reader, which makes every
	// id escape to the heap.
	var id ulid.ULID
	if err := g.entropy.MonotonicRead(g.ms, id[6:]); err != nil {
		// The entropy of this millisecond is used up (only after ~2^48
		// ids): move to the next one, which draws fresh entropy.
		g.ms++
		id = ulid.MustNew(g.ms, g.entropy)
		return id.String()
	}
	if err := id.SetTime(g.ms); err != nil {
		// Past the year 10889: ulid.Make would panic too.
		panic(err)
	}
	return id.String()
}
