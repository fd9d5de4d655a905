package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// Stage says whether a fault fires before the request reaches the inner store
// (nothing happened) or after it returned (it happened, but the caller sees an
// error — a lost response, like a timed-out S3 PUT that actually landed).
type Stage uint8

// The stages.
const (
	Before Stage = iota + 1
	After
)

func (s Stage) String() string {
	switch s {
	case Before:
		return "before"
	case After:
		return "after"
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// Hook is consulted at both stages of every request; a non-nil error fails it.
type Hook func(ctx context.Context, op Op, key string, stage Stage) error

// Fault is a declarative rule: fail the Nth request of Op whose key has Prefix.
type Fault struct {
	Op     Op     // "" matches every op
	Stage  Stage  // Before or After; zero means Before
	Prefix string // key prefix (for List: the listing prefix)
	// Nth fires on the Nth matching request only (1-based); 0 fires on every one.
	Nth int
	// Err is returned wrapped in *Error; nil means an error wrapping
	// failpoint.ErrInjected. Err: ErrPrecondition at After simulates a
	// conditional PUT that won but reported 412.
	Err error
}

// Faulty is a Store decorator for fault injection. For every request it
// checks, in order: the failpoints "storage/before-<op>" (then, after the
// inner call, "storage/after-<op>"), the Hook, and the injected Faults.
// OpenReadAt is op "stat" and each ReadAt of its reader op "get_range", as in
// Counting. Safe for concurrent use.
type Faulty struct {
	wrapper
	mu struct {
		sync.Mutex
		hook   Hook
		faults []*faultState
	}
}

type faultState struct {
	Fault
	seen int // matching requests so far
}

var (
	_ Store        = (*Faulty)(nil)
	_ ReadAtOpener = (*Faulty)(nil)
)

// NewFaulty wraps inner; with no hook or faults it only checks failpoints.
func NewFaulty(inner Store) *Faulty { return &Faulty{wrapper: wrapper{inner}} }

// SetHook installs h (nil removes it).
func (f *Faulty) SetHook(h Hook) {
	f.mu.Lock()
	f.mu.hook = h
	f.mu.Unlock()
}

// Inject adds a fault and returns a function that removes it.
func (f *Faulty) Inject(fault Fault) (remove func()) {
	if fault.Stage == 0 {
		fault.Stage = Before
	}
	st := &faultState{Fault: fault}
	f.mu.Lock()
	f.mu.faults = append(f.mu.faults, st)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, s := range f.mu.faults {
			if s == st {
				f.mu.faults = append(f.mu.faults[:i:i], f.mu.faults[i+1:]...)
				return
			}
		}
	}
}

// Clear removes the hook and every fault.
func (f *Faulty) Clear() {
	f.mu.Lock()
	f.mu.hook, f.mu.faults = nil, nil
	f.mu.Unlock()
}

// check runs the failpoint, hook and faults for one stage of one request.
func (f *Faulty) check(ctx context.Context, op Op, key string, stage Stage) error {
	if err := failpoint.Hit("storage/" + stage.String() + "-" + string(op)); err != nil {
		return opErr(op, key, err)
	}
	f.mu.Lock()
	hook := f.mu.hook
	var fire error
	for _, st := range f.mu.faults {
		if st.Stage != stage || (st.Op != "" && st.Op != op) || !strings.HasPrefix(key, st.Prefix) {
			continue
		}
		st.seen++
		if fire == nil && (st.Nth == 0 || st.Nth == st.seen) {
			fire = st.Err
			if fire == nil {
				fire = fmt.Errorf("storage fault %s-%s: %w", stage, op, failpoint.ErrInjected)
			}
		}
	}
	f.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, op, key, stage); err != nil {
			return opErr(op, key, err)
		}
	}
	return opErr(op, key, fire)
}

// Get implements Store.
func (f *Faulty) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if err := f.check(ctx, OpGet, key, Before); err != nil {
		return nil, Info{}, err
	}
	b, info, err := f.inner.Get(ctx, key)
	if err != nil {
		return b, info, err
	}
	if err := f.check(ctx, OpGet, key, After); err != nil {
		return nil, Info{}, err
	}
	return b, info, nil
}

// GetRange implements Store.
func (f *Faulty) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := f.check(ctx, OpGetRange, key, Before); err != nil {
		return nil, err
	}
	b, err := f.inner.GetRange(ctx, key, off, length)
	if err != nil {
		return b, err
	}
	if err := f.check(ctx, OpGetRange, key, After); err != nil {
		return nil, err
	}
	return b, nil
}

// Stat implements Store.
func (f *Faulty) Stat(ctx context.Context, key string) (Info, error) {
	return f.info(ctx, OpStat, key, func() (Info, error) { return f.inner.Stat(ctx, key) })
}

// Put implements Store.
func (f *Faulty) Put(ctx context.Context, key string, data []byte) (Info, error) {
	return f.info(ctx, OpPut, key, func() (Info, error) { return f.inner.Put(ctx, key, data) })
}

// PutIfAbsent implements Store.
func (f *Faulty) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	return f.info(ctx, OpPutIfAbsent, key, func() (Info, error) { return f.inner.PutIfAbsent(ctx, key, data) })
}

// PutIfMatch implements Store.
func (f *Faulty) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	return f.info(ctx, OpPutIfMatch, key, func() (Info, error) { return f.inner.PutIfMatch(ctx, key, data, etag) })
}

// info wraps a request returning Info with both stages. The After stage only
// runs when the inner request succeeded: it models "it happened, the caller
// did not hear".
func (f *Faulty) info(ctx context.Context, op Op, key string, call func() (Info, error)) (Info, error) {
	if err := f.check(ctx, op, key, Before); err != nil {
		return Info{}, err
	}
	info, err := call()
	if err != nil {
		return info, err
	}
	if err := f.check(ctx, op, key, After); err != nil {
		return Info{}, err
	}
	return info, nil
}

// List implements Store; its key for matching is the prefix.
func (f *Faulty) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	if err := f.check(ctx, OpList, prefix, Before); err != nil {
		return err
	}
	if err := f.inner.List(ctx, prefix, startAfter, fn); err != nil {
		return err
	}
	return f.check(ctx, OpList, prefix, After)
}

// Delete implements Store.
func (f *Faulty) Delete(ctx context.Context, key string) error {
	if err := f.check(ctx, OpDelete, key, Before); err != nil {
		return err
	}
	if err := f.inner.Delete(ctx, key); err != nil {
		return err
	}
	return f.check(ctx, OpDelete, key, After)
}

// OpenReadAt implements ReadAtOpener (op "stat"); each ReadAt is op "get_range".
func (f *Faulty) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if err := f.check(ctx, OpStat, key, Before); err != nil {
		return nil, err
	}
	r, err := OpenReadAt(ctx, f.inner, key)
	if err != nil {
		return nil, err
	}
	if err := f.check(ctx, OpStat, key, After); err != nil {
		r.Close()
		return nil, err
	}
	return &faultyReader{ReadAtCloser: r, f: f, ctx: ctx, key: key}, nil
}

// OpenReadAtSize implements SizedReadAtOpener: the open sends nothing (no
// fault point); each ReadAt is op "get_range".
func (f *Faulty) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	r, err := OpenReadAtSize(ctx, f.inner, key, size)
	if err != nil {
		return nil, err
	}
	return &faultyReader{ReadAtCloser: r, f: f, ctx: ctx, key: key}, nil
}

type faultyReader struct {
	ReadAtCloser
	f   *Faulty
	ctx context.Context
	key string
}

func (r *faultyReader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.f.check(r.ctx, OpGetRange, r.key, Before); err != nil {
		return 0, err
	}
	n, err := r.ReadAtCloser.ReadAt(p, off)
	if err != nil {
		return n, err
	}
	if err := r.f.check(r.ctx, OpGetRange, r.key, After); err != nil {
		return 0, err
	}
	return n, nil
}
