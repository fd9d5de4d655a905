package exec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/oklog/ulid/v2"
)

// TestLoadIDsIncrease pins that generated load ids are valid ULIDs, all
// distinct and increasing in generation order, across clock readings.
func TestLoadIDsIncrease(t *testing.T) {
	g := newLoadIDs()
	prev := ""
	for i := range 10 * loadIDsPerClock {
		id := g.next()
		if _, err := ulid.ParseStrict(id); err != nil {
			t.Fatalf("id %d %q: %v", i, id, err)
		}
		if id <= prev {
			t.Fatalf("id %d %q does not follow %q", i, id, prev)
		}
		prev = id
	}
}

// TestLoadIDsMatchULIDText pins the generator's text encoding against
// ulid's: for timestamps and 80-bit entropies at the edges and at random,
// the id equals the ULID of (timestamp, entropy).
func TestLoadIDsMatchULIDText(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cases := [][3]uint64{
		{0, 0, 0}, {ulid.MaxTime(), 0xffff, math.MaxUint64}, {1, 0, 1}, {1 << 40, 0x8000, 1 << 63},
	}
	for range 200 {
		cases = append(cases, [3]uint64{r.Uint64N(ulid.MaxTime() + 1), r.Uint64() & 0xffff, r.Uint64()})
	}
	for _, c := range cases {
		g := newLoadIDs()
		g.fresh(c[0])
		g.hi, g.lo = c[1], c[2]
		var b [ulid.EncodedSize]byte
		g.text(b[:])
		var want ulid.ULID
		_ = want.SetTime(c[0])
		want[6], want[7] = byte(c[1]>>8), byte(c[1])
		binary.BigEndian.PutUint64(want[8:], c[2])
		if string(b[:]) != want.String() {
			t.Fatalf("(%d, %x, %x): %s, want %s", c[0], c[1], c[2], b[:], want.String())
		}
	}
}

// TestLoadIDsStepAndOverflow pins the step between two ids of one
// millisecond (the entropy grows by 1 to 2³²−2, the timestamp stays) and
// the overflow of a millisecond's 80 bits (the next id moves to the next
// millisecond), both still increasing.
func TestLoadIDsStepAndOverflow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hi, lo uint64
		nextMs bool
	}{
		{"step", 0x1234, 1 << 40, false},
		{"carry into the top bits", 0x1234, math.MaxUint64 - 3, false},
		{"overflow", 0xffff, math.MaxUint64 - 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newLoadIDs()
			const ms = 1_700_000_000_000
			g.fresh(ms)
			g.ms, g.n, g.hi, g.lo = ms, 1, tc.hi, tc.lo
			var b [ulid.EncodedSize]byte
			g.text(b[:])
			prev := string(b[:])
			next := g.next()
			id, err := ulid.ParseStrict(next)
			if err != nil || next <= prev {
				t.Fatalf("next id %q (%v) does not follow %q", next, err, prev)
			}
			if wantMs := uint64(ms) + map[bool]uint64{false: 0, true: 1}[tc.nextMs]; id.Time() != wantMs {
				t.Fatalf("next id at %d ms, want %d", id.Time(), wantMs)
			}
			if !tc.nextMs {
				p, _ := ulid.ParseStrict(prev)
				pe, ne := p.Entropy(), id.Entropy()
				ph, nh := uint64(pe[0])<<8|uint64(pe[1]), uint64(ne[0])<<8|uint64(ne[1])
				pl, nl := binary.BigEndian.Uint64(pe[2:]), binary.BigEndian.Uint64(ne[2:])
				step, borrow := bits.Sub64(nl, pl, 0)
				if nh-ph != borrow || step < 1 || step >= math.MaxUint32-1+1 {
					t.Fatalf("entropy step %d (top bits %d → %d)", step, ph, nh)
				}
			}
		})
	}
}
