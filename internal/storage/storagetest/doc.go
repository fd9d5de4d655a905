// Package storagetest is the conformance suite every storage.Store backend and
// decorator must pass, plus the race workers the cross-process tests reuse.
//
// Run covers: whole-object and ranged reads, Stat, overwrite, empty objects,
// input/output isolation, ErrNotFound wrapping (*storage.Error naming the key),
// invalid keys on every method, lexical List with prefix/StartAfter edge
// cases and paging, List stopping on fn's error, Delete (idempotent),
// cancelled contexts (no effect), PutIfAbsent/PutIfMatch semantics, OpenReadAt,
// and two races: PutIfAbsent with many racers (exactly one winner per round)
// and a CAS chain (every round one winner, no update lost).
//
// Caveat: the suite never creates a key that is also a "directory" of other
// keys ("a" and "a/b"); the local backend refuses that (see storage docs).
package storagetest
