package storage

import "context"

// HoldLazy makes key readable through ctx's held batch (WithHeldBatch) with
// the bytes make returns, made on the first read that needs them, and
// reports whether ctx has a held batch (false: nothing was recorded, and
// the caller must write the object itself). make must return the same
// bytes every time (callers wrap it in a sync.Once) and be safe for
// concurrent use.
//
// The object is never sent and Held does not list it: it exists only for
// the readers of the batch (and of held batches reading this one, a
// rebase's). A group commit's leader stages each write's rows this way
// (table.DeferFragment) because it replaces them by one fragment per table
// before anything is sent; only a staging that reads another write's rows
// pays for their encoding.
func HoldLazy(ctx context.Context, key string, make func() ([]byte, error)) bool {
	b := batchOf(ctx)
	if b == nil || !b.held {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lazy == nil {
		b.lazy = map[string]func() ([]byte, error){}
	}
	b.lazy[key] = make
	return true
}

// CanHoldLazy reports whether ctx carries a held batch (HoldLazy would
// record).
func CanHoldLazy(ctx context.Context) bool {
	b := batchOf(ctx)
	return b != nil && b.held
}
