package storage

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors. Backends wrap them with the key; callers test with errors.Is.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrExists: PutIfAbsent found the key already present.
	ErrExists = errors.New("object already exists")
	// ErrPrecondition: PutIfMatch found a different ETag (or no object).
	ErrPrecondition = errors.New("precondition failed")
	// ErrInvalidKey: the key is empty, absolute, or contains "." / ".." segments.
	ErrInvalidKey = errors.New("invalid object key")

	// Remote-store failures (S3). Backends wrap them with detail; a request
	// that fails with one of them changed nothing the caller can see.

	// ErrAccessDenied: the credentials were refused (missing, wrong, or
	// without permission).
	ErrAccessDenied = errors.New("access denied by the object store")
	// ErrBucketNotFound: the bucket does not exist.
	ErrBucketNotFound = errors.New("bucket not found")
	// ErrThrottled: the store kept asking us to slow down after every retry.
	ErrThrottled = errors.New("object store throttled the request")
	// ErrUnavailable: the endpoint could not be reached, or kept failing
	// with server errors, after every retry.
	ErrUnavailable = errors.New("object store unavailable")
	// ErrUnsupported: the store cannot perform an optional request (a
	// Copier whose server turned out not to support conditional copies).
	// Nothing was changed; callers fall back to the plain requests.
	ErrUnsupported = errors.New("not supported by the object store")
)

// Info describes one stored object.
type Info struct {
	Key     string
	Size    int64
	ETag    string
	ModTime time.Time
}

// Store is the object-store seam. Implementations must be safe for concurrent
// use by many goroutines; the local backend is also safe across OS processes
// sharing one directory.
type Store interface {
	// Get returns the whole object and its ETag.
	Get(ctx context.Context, key string) ([]byte, Info, error)
	// GetRange returns length bytes starting at off (fewer at the end of the object).
	GetRange(ctx context.Context, key string, off, length int64) ([]byte, error)
	// Stat returns metadata without the body.
	Stat(ctx context.Context, key string) (Info, error)
	// Put writes (or overwrites) an object durably. Used only for objects with
	// fresh unique names; anything shared goes through the conditional puts.
	Put(ctx context.Context, key string, data []byte) (Info, error)
	// PutIfAbsent creates the object only if the key is absent; otherwise ErrExists.
	// Exactly one of any number of concurrent callers on one key succeeds.
	PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error)
	// PutIfMatch replaces the object only if its current ETag equals etag;
	// otherwise ErrPrecondition (ErrNotFound if the object is missing).
	PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error)
	// List calls fn for each object whose key has the prefix and sorts after
	// startAfter ("" = from the beginning), in lexical key order. fn returning an
	// error stops the listing and List returns that error.
	List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error
	// Delete removes the object. Deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
}

// Serializer is implemented by stores that can make cooperating writers on
// one machine take turns on a name (Local: an flock). It is an efficiency
// hint only — it spares writers of several processes the work a lost CAS
// throws away — never an authority: correctness rests on the CAS alone.
type Serializer interface {
	// Serialize waits for the turn on name (or ctx's end) and returns its
	// release.
	Serialize(ctx context.Context, name string) (release func(), err error)
}

// SerializerOf finds a Serializer in st or under its wrappers (stores with
// an Inner method).
func SerializerOf(st Store) (Serializer, bool) {
	for st != nil {
		if s, ok := st.(Serializer); ok {
			return s, true
		}
		w, ok := st.(interface{ Inner() Store })
		if !ok {
			return nil, false
		}
		st = w.Inner()
	}
	return nil, false
}
