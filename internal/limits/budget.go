package limits

import "sync/atomic"

// Budget is a byte budget charged as working memory is taken. It is safe
// for concurrent use; a nil *Budget is unlimited.
type Budget struct {
	resource string
	limit    int64
	hint     string
	used     atomic.Int64
}

// NewBudget returns a budget of limit bytes for resource; limit <= 0 means
// unlimited (nil).
func NewBudget(resource string, limit int64, hint string) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{resource: resource, limit: limit, hint: hint}
}

// Init is NewBudget into b, for a caller that keeps the budget inside a
// larger value (one allocation per query instead of two). It returns b,
// or nil when limit <= 0 (unlimited). b must not be in use.
func (b *Budget) Init(resource string, limit int64, hint string) *Budget {
	if limit <= 0 {
		return nil
	}
	b.resource, b.limit, b.hint = resource, limit, hint
	b.used.Store(0)
	return b
}

// Charge takes n bytes. Over the limit it takes nothing and returns the
// *Error, so the caller can stop before allocating.
func (b *Budget) Charge(n int64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if used := b.used.Add(n); used > b.limit {
		b.used.Add(-n)
		return &Error{Resource: b.resource, Limit: b.limit, Actual: used, Hint: b.hint}
	}
	return nil
}

// Release returns n bytes taken by Charge.
func (b *Budget) Release(n int64) {
	if b != nil && n > 0 {
		b.used.Add(-n)
	}
}

// Used returns the bytes currently charged.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Limit returns the budget's bound (0 for a nil, unlimited budget).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}
