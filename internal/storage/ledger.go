package storage

import (
	"context"
	"errors"
	"slices"
	"sync"
	"syscall"
)

// ErrNoSpace: the store has no room left for the object (a local disk or
// quota is full; the backends' ENOSPC and EDQUOT). A write that fails with it
// had no effect; it can be retried once space is freed.
var ErrNoSpace = errors.New("no space left on the storage device (the disk is full)")

// Is makes every backend's ENOSPC/EDQUOT match ErrNoSpace, however it is
// wrapped below the request error.
func (e *Error) Is(target error) bool {
	return target == ErrNoSpace && (errors.Is(e.Err, syscall.ENOSPC) || errors.Is(e.Err, syscall.EDQUOT))
}

// Ledger records the objects one write created under names that are its
// own, so that a write that certainly published nothing can delete them
// before it returns instead of leaving them to cleanup (docs/invariants.md,
// "A failed write deletes what it created"). A key belongs in a ledger only
// if no other write can name the same object:
//
//   - a fresh name (a new ULID) given by PutFresh — whether or not the put
//     returned an error: the name is nobody else's, deleting it is harmless;
//   - a content-addressed object whose content names such an object (a
//     table state naming the write's new fragment): no other write can
//     produce those bytes (table.WriteState adds them).
//
// A content-addressed object that names only pre-existing objects (an
// empty table state, a merge's state built from both sides' fragments, a
// schema source) is never recorded: another write, possibly already
// published, may have written or be relying on the same key.
//
// The writer decides when the ledger may be discarded: only when no
// published commit can reference its keys (an outcome-unknown ref CAS
// forbids it). A Ledger is safe for concurrent use; the nil Ledger records
// nothing.
type Ledger struct {
	mu   sync.Mutex
	keys []string
	set  map[string]bool
	// names are fresh names of this write that are no object (an inline
	// deletion vector carried in a table state, AddName): Has reports
	// them, so the state naming one joins the ledger, but Discard has
	// nothing to delete for them.
	names map[string]bool
	kept  bool
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{set: map[string]bool{}} }

type ledgerKey struct{}

// WithLedger returns ctx whose PutFresh calls (and table states naming
// their objects) are recorded in l; a nil l records nothing.
func WithLedger(ctx context.Context, l *Ledger) context.Context {
	return context.WithValue(ctx, ledgerKey{}, l)
}

// LedgerOf returns ctx's ledger, or nil.
func LedgerOf(ctx context.Context) *Ledger {
	l, _ := ctx.Value(ledgerKey{}).(*Ledger)
	return l
}

// Add records key.
func (l *Ledger) Add(key string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.set[key] {
		l.set[key] = true
		l.keys = append(l.keys, key)
	}
}

// AddName records a fresh name of the write that is not an object of the
// store (table.InlineDV references): Has reports it and Len counts it, but
// Keys omits it and Discard deletes nothing for it.
func (l *Ledger) AddName(name string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names == nil {
		l.names = map[string]bool{}
	}
	l.names[name] = true
}

// Keep marks the recorded objects as possibly referenced by a published
// commit (a ref CAS was sent and not proven refused, or succeeded): from
// now on Discard deletes nothing. commit.PublishChain calls it on the
// ledger of its context.
func (l *Ledger) Keep() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.kept = true
	l.mu.Unlock()
}

// Kept reports whether Keep was called.
func (l *Ledger) Kept() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept
}

// Has reports whether key is recorded.
func (l *Ledger) Has(key string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set[key] || l.names[key]
}

// Keys returns the recorded keys in the order they were recorded.
func (l *Ledger) Keys() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

// Discard deletes every recorded key, newest first (commit objects and
// states before the data they name, as cleanup orders its deletions), and
// empties the ledger; after Keep it deletes nothing. It is best effort: it
// returns the first error but tries every key, and whatever it could not
// delete is unreferenced garbage for cleanup. The caller must have flushed
// the write's batch (Flush): a deferred put still running could land after
// its delete.
func (l *Ledger) Discard(ctx context.Context, st Store) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.kept {
		l.mu.Unlock()
		return nil
	}
	keys := l.keys
	l.keys, l.set, l.names = nil, map[string]bool{}, nil
	l.mu.Unlock()
	ctx = WithoutBatch(context.WithoutCancel(ctx))
	var first error
	for _, key := range slices.Backward(keys) {
		if err := st.Delete(ctx, key); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// PutFresh writes an object under a name no other write uses (a new ULID)
// with Put, first recording the key in ctx's ledger: even a put that
// failed may have left the object (a timed-out S3 PUT that landed), and
// deleting a fresh name is harmless either way.
func PutFresh(ctx context.Context, st Store, key string, data []byte) (Info, error) {
	LedgerOf(ctx).Add(key)
	return st.Put(ctx, key, data)
}

// Settled is implemented by stores whose requests are over when they
// return: a request that returned, with or without an error, cannot take
// effect afterwards, so reading the object again tells whether it did.
// Local directories and memory are settled; a remote store is not (a
// request that timed out on the client may still be applied by the
// server), and neither is any store that does not say so.
type Settled interface {
	// Settled reports whether the store is settled.
	Settled() bool
}

// IsSettled reports whether st, or the store under its wrappers (stores
// with an Inner method, which add no requests of their own in flight), is
// Settled.
func IsSettled(st Store) bool {
	for st != nil {
		if s, ok := st.(Settled); ok {
			return s.Settled()
		}
		w, ok := st.(interface{ Inner() Store })
		if !ok {
			return false
		}
		st = w.Inner()
	}
	return false
}

// Settled implements Settled: every request is synchronous, and a failed
// put publishes nothing or, after its rename, the whole object.
func (l *Local) Settled() bool { return true }

// Settled implements Settled.
func (m *Mem) Settled() bool { return true }

// Len is the number of recorded keys.
func (l *Ledger) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys) + len(l.names)
}
