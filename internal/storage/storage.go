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
func SerializerOf(st Store) (Serializer, bool) { return capabilityOf[Serializer](st) }

// capabilityOf finds an implementation of C in st or under its wrappers.
func capabilityOf[C any](st Store) (C, bool) {
	for st != nil {
		if c, ok := st.(C); ok {
			return c, true
		}
		w, ok := st.(interface{ Inner() Store })
		if !ok {
			break
		}
		st = w.Inner()
	}
	var zero C
	return zero, false
}

// TurnState is what Mailbox.TryTurn found.
type TurnState uint8

const (
	// TurnTaken: the caller holds the turn now.
	TurnTaken TurnState = iota + 1
	// TurnInProcess: another handle of this process holds it; the caller
	// does not, and proceeds as if there were no turns (handles of one
	// process race by CAS).
	TurnInProcess
	// TurnBusy: another process holds it.
	TurnBusy
)

// Proposal is a write handed to the holder of a turn (Mailbox.Claim): its
// id and its proposer's encoding, which the store does not read.
type Proposal struct {
	ID   string
	Data []byte
}

// Mailbox is implemented by stores on which a writer can hand its writes
// to the process that holds the turn on a name, which commits them with
// its own (Local: files beside the turn's lock). It is the transport of
// the cross-process group commit (docs/write-path.md, "Writes handed to
// the turn's holder"); like Serializer it decides nothing about
// correctness: the CAS does, and the engine checks every outcome it is
// told against the commit chain it can read.
//
// A proposer puts a proposal (Propose), then waits for its receipt or for
// the turn. The holder of the turn takes proposals (Claim, atomic against
// Withdraw: exactly one of them succeeds for an id), and answers each with
// a receipt (Reply) before it releases the turn. Ids are chosen by the
// proposer, unique and ordered by time (ULIDs), one file name element.
type Mailbox interface {
	Serializer
	// Turn is Serialize, reporting whether the caller holds the turn (own)
	// or another handle of this process does (the release is a no-op).
	Turn(ctx context.Context, name string) (release func(), own bool, err error)
	// TryTurn takes the turn on name if no one holds it, without waiting;
	// release is nil unless st is TurnTaken or TurnInProcess (a no-op).
	TryTurn(name string) (release func(), st TurnState, err error)
	// Propose puts a proposal for the holder of name's turn.
	Propose(name, id string, data []byte) error
	// Withdraw takes a proposal back: true if it was not claimed (it never
	// will be), false if a holder claimed it.
	Withdraw(name, id string) (bool, error)
	// Claim takes up to max proposals, oldest first. Only the holder of
	// the turn claims.
	Claim(name string, max int) ([]Proposal, error)
	// Reply sets (or replaces) the receipt of claimed proposals: pending
	// (written before a CAS) or final. One receipt answers them all.
	Reply(name string, ids []string, final bool, receipt []byte) error
	// Receipt returns the receipt of id, final if there is one, else the
	// pending one; ErrNotFound if there is none.
	Receipt(name, id string) (receipt []byte, final bool, err error)
	// Forget removes whatever the mailbox holds of id.
	Forget(name, id string) error
}

// MailboxOf finds a Mailbox in st or under its wrappers.
func MailboxOf(st Store) (Mailbox, bool) { return capabilityOf[Mailbox](st) }
