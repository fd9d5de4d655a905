package storage

// wrapper is the store under a decorator (Counting, Recording, Delayed,
// Faulty, Cached, Batching). Embedded in each, it answers once for all of
// them what a decorator answers by asking the store it wraps: Inner, and
// the optional capabilities a decorator offers exactly when that store does.
type wrapper struct {
	inner Store
}

// Inner returns the wrapped store.
func (w wrapper) Inner() Store { return w.inner }

// PutsShared implements SharedPutter: when the wrapped store does.
func (w wrapper) PutsShared() bool { _, ok := SharedPutterOf(w.inner); return ok }

// CopiesIfAbsent implements Copier: when the wrapped store does.
func (w wrapper) CopiesIfAbsent() bool { _, ok := CopierOf(w.inner); return ok }
