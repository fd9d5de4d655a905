package table

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// DeferredBytes is the size a deferred fragment (DeferFragment) records in
// place of its file's: no Parquet file is that small (magic, footer length
// and magic alone are 12 bytes), so a state naming it is recognisably one
// that must never be published (IsDeferred).
const DeferredBytes = 1

// FPDeferredEncode is hit when a deferred fragment's file is made (a
// staging read it); an error there fails that read.
const FPDeferredEncode = "table/deferred-encode"

// IsDeferred reports whether f is a deferred fragment (DeferFragment),
// whose state must be rewritten before it is published.
func IsDeferred(f Fragment) bool { return f.Bytes == DeferredBytes }

// DeferFragment is WriteFragment for a fragment that will be replaced
// before anything naming it is published: a group commit's member rows,
// which the batch re-encodes as one fragment per table
// (docs/write-path.md, "Many writers"). It returns the fragment's
// description — key, rows, statistics and its fragment index, which is
// written (put into ctx's batch) as usual — with Bytes = DeferredBytes,
// and holds the Parquet file in ctx's held batch as a lazy object
// (storage.HoldLazy): encoded on the first read that needs it (another
// write of the batch reading these rows), usually never. ok is false, and
// nothing is written, when ctx carries no held batch.
//
// rec is retained until the file is made; the caller keeps its own
// reference. Its buffers must come from the Go heap (the default
// allocator): a fragment never read is never released, and the collector
// reclaims it with the batch.
func DeferFragment(ctx context.Context, st storage.Store, prefix string, schema Schema, rec arrow.RecordBatch, opts WriteOptions) (f Fragment, ok bool, err error) {
	if !storage.CanHoldLazy(ctx) {
		return Fragment{}, false, nil
	}
	if err := schema.Validate(); err != nil {
		return Fragment{}, false, err
	}
	if err := checkRecord(schema, rec); err != nil {
		return Fragment{}, false, err
	}
	if rec.NumRows() == 0 {
		return Fragment{}, false, fmt.Errorf("%w: refusing to write an empty fragment", ErrValue)
	}
	idx, stats := fragmentIndexStats(schema, rec)
	if err := failpoint.Hit(FPBeforeFragment); err != nil {
		return Fragment{}, false, err
	}
	key := prefix + "/data/" + ulid.Make().String() + ".parquet"
	f = Fragment{Key: key, Rows: rec.NumRows(), Bytes: DeferredBytes, Stats: stats}
	if idx != nil {
		if f.Index, err = writeFragmentIndex(ctx, st, key, idx, opts.InlineIndexBytes); err != nil {
			return Fragment{}, false, err
		}
		f.IndexBytes = int64(len(idx))
	}
	rec.Retain()
	var once sync.Once
	var data []byte
	var encErr error
	storage.HoldLazy(ctx, key, func() ([]byte, error) {
		once.Do(func() {
			defer rec.Release()
			if encErr = failpoint.Hit(FPDeferredEncode); encErr != nil {
				return
			}
			// The same encoder as WriteFragment, into memory.
			mem := storage.NewMem()
			var tmp Fragment
			if tmp, encErr = WriteFragment(storage.WithoutBatch(context.WithoutCancel(ctx)), mem, prefix, schema, rec, opts); encErr == nil {
				data, _, encErr = mem.Get(context.Background(), tmp.Key)
			}
		})
		return data, encErr
	})
	if err := failpoint.Hit(FPAfterFragment); err != nil {
		return Fragment{}, false, err
	}
	return f, true, nil
}
