package omnigraph

import (
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Prepared reads. Graph.Query takes query source, and compiling it (two
// parses: one to predict the tables a cold read fetches, one against the
// head's catalog) costs more than a warm key lookup itself. A handle
// therefore keeps the plans of the read queries it ran, by source and
// name, each with the catalog it was compiled against: a plan is reused
// only for that very catalog (the compiled schema of the resolved commit,
// cached per schema key), so a schema change, or a catalog recompiled after
// eviction, compiles again. Plans are never modified by a read, so
// concurrent queries share them. Only successful read compilations are
// kept; errors are reported afresh on every call.

// maxPlans bounds the plans a handle keeps, and maxPlanSource the size
// of a source worth keeping (a caller that inlines values into the text
// gains nothing from a cache of it).
const (
	maxPlans      = 256
	maxPlanSource = 64 << 10
)

type planKey struct{ src, name string }

// readPlanEntry is one kept read query: the types it names (queryTypes)
// and its plan for one catalog.
type readPlanEntry struct {
	types []string
	cat   *schema.Catalog
	plan  *query.Plan
}

// planCache holds a handle's prepared reads (zero value ready).
type planCache struct {
	mu sync.Mutex
	m  map[planKey]*readPlanEntry
}

func (c *planCache) get(src, name string) *readPlanEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[planKey{src, name}]
}

func (c *planCache) put(src, name string, e *readPlanEntry) {
	if len(src) > maxPlanSource {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[planKey]*readPlanEntry{}
	}
	if _, ok := c.m[planKey{src, name}]; !ok && len(c.m) >= maxPlans {
		for k := range c.m { // any one: a working set that fits stays
			delete(c.m, k)
			break
		}
	}
	c.m[planKey{src, name}] = e
}
