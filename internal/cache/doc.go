// Package cache is a byte-bounded LRU for immutable decoded objects, keyed by
// their object name (commits, schema sources, table states, fragment footers).
//
// Guarantees:
//   - Safe for concurrent use by many goroutines.
//   - The sum of the sizes callers report for resident entries never exceeds
//     the budget after any call returns (an entry larger than the whole budget
//     is returned to the caller but never retained).
//   - Concurrent GetOrLoad calls for one absent key run the loader once; the
//     others wait for its result (or their own context).
//
// Caveats:
//   - Values must be immutable: callers share them without copying. The cache
//     never checks this; caching a mutable value is a bug in the caller.
//   - Sizes are whatever the caller says; a rough estimate of retained heap
//     bytes is enough. The cache does not measure values.
//   - Because keys are object names and objects are immutable, there is no
//     invalidation. Mutable objects (refs) must never be cached here.
package cache
