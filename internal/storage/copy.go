package storage

import (
	"context"
	"errors"
	"fmt"
)

// Copier is the optional capability of stores that can create an object as
// a copy of another in one request, the store reading the source and
// creating the destination (S3: CopyObject with If-None-Match: * on the
// destination). The copy holds the source's bytes as of one instant: a put
// that replaces the source concurrently is either wholly in the copy or
// wholly absent from it. Exactly one of any number of concurrent
// CopyIfAbsent and PutIfAbsent calls on one destination succeeds.
//
// Mem implements it natively; Local does not (a copy there is a read and a
// PutIfAbsent, no cheaper than the fallback); the S3 backend does when the
// server is known to honour the condition (s3.Config.ConditionalCopy). The
// wrappers (Counting, Recording, Delayed, Faulty, Batching, Cached) forward
// it when their inner store has it, counting, recording, delaying and
// fault-injecting it as one request of OpCopyIfAbsent.
type Copier interface {
	// CopiesIfAbsent reports whether CopyIfAbsent is available; it sends no
	// request.
	CopiesIfAbsent() bool
	// CopyIfAbsent creates dst holding src's current bytes, only if dst is
	// absent. The Info's Size is -1 when the store does not report it (S3).
	// Errors (each an *Error for dst): ErrNotFound wrapped in a
	// *CopySourceError when src is missing (nothing created); ErrExists
	// when dst exists (dst unchanged); ErrUnsupported when the store
	// learnt at run time that it cannot (nothing changed; CopiesIfAbsent
	// is false from then on, and the caller falls back).
	CopyIfAbsent(ctx context.Context, src, dst string) (Info, error)
}

// CopySourceError reports that the source of a copy is missing; it wraps
// ErrNotFound.
type CopySourceError struct {
	Src string
}

func (e *CopySourceError) Error() string {
	return fmt.Sprintf("copy source %q: %v", e.Src, ErrNotFound)
}

// Unwrap returns ErrNotFound.
func (e *CopySourceError) Unwrap() error { return ErrNotFound }

// CopierOf returns st's Copier when st has the capability now. It does not
// look under wrappers: a wrapper forwards the capability itself, so that
// the copy is counted and delayed like every request.
func CopierOf(st Store) (Copier, bool) {
	c, ok := st.(Copier)
	if !ok || !c.CopiesIfAbsent() {
		return nil, false
	}
	return c, true
}

// CopyIfAbsent copies src to dst through st's Copier; for a store without
// one (or one that answers ErrUnsupported) it reads src and creates dst by
// PutIfAbsent, two requests: dst then holds the bytes src held at the read.
// Errors are as for Copier.CopyIfAbsent.
func CopyIfAbsent(ctx context.Context, st Store, src, dst string) (Info, error) {
	if c, ok := CopierOf(st); ok {
		info, err := c.CopyIfAbsent(ctx, src, dst)
		if !errors.Is(err, ErrUnsupported) {
			return info, err
		}
	}
	data, _, err := st.Get(ctx, src)
	if errors.Is(err, ErrNotFound) {
		return Info{}, opErr(OpCopyIfAbsent, dst, &CopySourceError{Src: src})
	}
	if err != nil {
		return Info{}, err
	}
	return st.PutIfAbsent(ctx, dst, data)
}

// unsupportedCopy is the answer of a wrapper whose inner store cannot copy.
func unsupportedCopy(dst string) error { return opErr(OpCopyIfAbsent, dst, ErrUnsupported) }

// CopiesIfAbsent implements Copier: always.
func (m *Mem) CopiesIfAbsent() bool { return true }

// CopyIfAbsent implements Copier, atomically under the store's lock.
func (m *Mem) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	if err := checkKey(OpCopyIfAbsent, src); err != nil {
		return Info{}, err
	}
	if err := m.begin(ctx, OpCopyIfAbsent, dst); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.mu.objs[src]
	if !ok {
		return Info{}, opErr(OpCopyIfAbsent, dst, &CopySourceError{Src: src})
	}
	if _, ok := m.mu.objs[dst]; ok {
		return Info{}, opErr(OpCopyIfAbsent, dst, ErrExists)
	}
	return m.storeLocked(dst, o.data), nil
}

func innerCopier(inner Store, dst string) (Copier, error) {
	c, ok := CopierOf(inner)
	if !ok {
		return nil, unsupportedCopy(dst)
	}
	return c, nil
}

// CopyIfAbsent implements Copier: one OpCopyIfAbsent request, no payload
// bytes (the server copies). A store that cannot copy answers
// ErrUnsupported without a request, which is not counted.
func (c *Counting) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	ic, err := innerCopier(c.inner, dst)
	if err != nil {
		return Info{}, err
	}
	info, err := ic.CopyIfAbsent(ctx, src, dst)
	c.add(OpCopyIfAbsent, 0)
	return info, err
}

// CopyIfAbsent implements Copier (recorded under the destination key).
func (r *Recording) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	ic, err := innerCopier(r.inner, dst)
	if err != nil {
		return Info{}, err
	}
	defer r.end(r.start(OpCopyIfAbsent, dst, 0, -1))
	return ic.CopyIfAbsent(ctx, src, dst)
}

// CopyIfAbsent implements Copier: one round trip.
func (d *Delayed) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	ic, err := innerCopier(d.inner, dst)
	if err != nil {
		return Info{}, err
	}
	if err := d.wait(ctx); err != nil {
		return Info{}, opErr(OpCopyIfAbsent, dst, err)
	}
	return ic.CopyIfAbsent(ctx, src, dst)
}

// CopyIfAbsent implements Copier (op "copy_if_absent", matched on the
// destination key; the After stage models a copy that landed unheard).
func (f *Faulty) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	ic, err := innerCopier(f.inner, dst)
	if err != nil {
		return Info{}, err
	}
	return f.info(ctx, OpCopyIfAbsent, dst, func() (Info, error) { return ic.CopyIfAbsent(ctx, src, dst) })
}

// CopyIfAbsent implements Copier. It is never deferred (its answer is the
// point of it); a source still pending in the context's batch is not yet
// in the store, so that copy is ErrUnsupported and the caller's fallback
// reads the pending bytes.
func (s *Batching) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	if _, pending := batchOf(ctx).lookup(src); pending {
		return Info{}, unsupportedCopy(dst)
	}
	ic, err := innerCopier(s.inner, dst)
	if err != nil {
		return Info{}, err
	}
	return ic.CopyIfAbsent(ctx, src, dst)
}

// CopyIfAbsent implements Copier. Nothing is cached: the copied bytes never
// pass through this process.
func (c *Cached) CopyIfAbsent(ctx context.Context, src, dst string) (Info, error) {
	ic, err := innerCopier(c.inner, dst)
	if err != nil {
		return Info{}, err
	}
	return ic.CopyIfAbsent(ctx, src, dst)
}
