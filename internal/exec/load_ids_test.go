package exec

import (
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
