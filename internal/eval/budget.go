package eval

import (
	"github.com/omnigraph-go/omnigraph/internal/limits"
)

// Query limits. A query's working memory — binding rows, memoized
// expansions, aggregate groups, output rows while held (Run; a Stream
// holds one batch) — is charged to a budget as it is allocated,
// and a query over budget stops with *limits.Error before the allocation
// that would exceed it, so a runaway product or expansion never takes the
// process (and a server's other clients) down. A deadline on the context
// stops it the same way.

// DefaultMemoryBytes is the per-query working-memory budget when Options
// sets none.
const DefaultMemoryBytes = 2 << 30

// ResourceMemory and ResourceTime name the two query limits in
// *limits.Error (and in resource_limit error bodies).
const (
	ResourceMemory = "query_memory_bytes"
	ResourceTime   = "query_time_ms"
)

// overBudget carries a budget failure from deep inside an operator up to
// Run, which recovers it: every allocation site would otherwise need an
// error path for a condition that aborts the whole query anyway (the
// same bail-out the Go parsers use). It never crosses the package.
type overBudget struct{ err error }

// charge takes n bytes from mem, or stops the query.
func charge(mem *limits.Budget, n int64) {
	if err := mem.Charge(n); err != nil {
		panic(overBudget{err})
	}
}

// initBudget makes b the budget of one run and returns it (nil when
// unlimited).
func initBudget(b *limits.Budget, o Options) *limits.Budget {
	n := o.MemoryBytes
	if n == 0 {
		n = DefaultMemoryBytes
	}
	return b.Init(ResourceMemory, n, "narrow the query, add a limit, or raise the query memory limit (--memory-limit)")
}

// recoverBudget turns an overBudget bail-out into the query's error.
func recoverBudget(err *error) {
	if p := recover(); p != nil {
		ob, ok := p.(overBudget)
		if !ok {
			panic(p)
		}
		*err = ob.err
	}
}
