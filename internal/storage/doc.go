// Package storage is the only way Omnigraph reaches bytes: a small object-store
// interface with local-directory and in-memory backends (S3 is the
// sub-package s3), plus decorators: request counting (Counting), fault
// injection (Faulty), injected latency (Delayed), caching of immutable
// objects in memory and in a shared disk directory (Cached, DiskCache), and
// concurrent puts for one write (Batching, WithBatch, Flush). Each decorator
// embeds the store it wraps (wrapper.go): Inner and the optional
// capabilities it offers only when that store does (SharedPutter, Copier)
// are answered there once for all of them.
//
// Keys are slash-separated, relative, and never start or end with "/". Objects
// are whole blobs: a Put either publishes the complete object or nothing.
//
// The interface is deliberately no stronger than S3 with conditional writes:
//
//   - PutIfAbsent maps to PUT with If-None-Match: *.
//   - PutIfMatch maps to PUT with If-Match: <etag>. ETags are opaque strings that
//     only ever come from the store itself; callers never compute them.
//   - List is lexical by key, with a StartAfter cursor, like ListObjectsV2.
//
// Everything above this package that needs atomicity gets it from exactly these
// two conditional primitives.
//
// # Guarantees
//
//   - Every backend is safe for concurrent use by many goroutines. [Local] is
//     also safe across OS processes sharing one directory: PutIfAbsent has
//     exactly one winner (hard link), PutIfMatch is serialised by flock.
//   - A successful Put/PutIfAbsent/PutIfMatch on [Local] is durable (file and
//     directory fsynced) before it returns; a failed or cancelled one publishes
//     nothing (it may leave a ".tmp-" file that cleanup can reclaim).
//   - Errors are [*Error] values wrapping the sentinels; test them with
//     errors.Is (ErrNotFound, ErrExists, ErrPrecondition, ErrInvalidKey).
//   - ETags are opaque. [Mem] uses a store-wide generation counter (never
//     repeats); [Local] uses a truncated SHA-256 of the content, so equal ETags
//     mean equal bytes (like S3's MD5 ETag for single-part uploads).
//   - Cached serves only keys its Immutable predicate names, never lists,
//     and never returns bytes other than the store's: a damaged disk entry is
//     a miss (TestDiskCacheCorruptEntry). Batching's Flush returns nil only
//     when every deferred put is durable (TestBatching).
//
// # Caveats
//
//   - A conditional PUT that is retried (S3, network) may report
//     ErrPrecondition even though an earlier attempt won. Callers that care
//     re-read the object and compare it with what they wrote.
//   - On [Local] a key cannot be both an object and a "directory" of other keys
//     ("a" and "a/b"): the second Put fails with ErrInvalidKey. S3 and [Mem]
//     allow it; Omnigraph's layout never does it.
//   - Put is for objects with fresh unique names. Shared, mutable objects
//     (refs) go through PutIfAbsent and PutIfMatch only.
//   - [OpenReadAt] readers see one version of an immutable object; for stores
//     without a native reader they issue a ranged GET per ReadAt.
//
// The on-disk layout and durability recipe are specified in
// docs/format/storage.md.
package storage
