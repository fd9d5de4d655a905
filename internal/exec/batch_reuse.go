package exec

import (
	"context"
	"reflect"
	"slices"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Fragments reused across the rounds of a batch (docs/write-path.md,
// "Processes take turns").
//
// A batch is staged again whenever the head moves under it: after a lost
// CAS, and when its leader staged it before taking the branch's turn and
// another process published meanwhile. A write whose read set did not
// change then builds the same rows as before (a keyed update of a row
// nobody else touched, an insert), and encoding and sending them again
// would cost a fragment and a fragment index more per round — a file
// creation and an fsync each on a local directory, a round trip each on
// S3. The batch's fragmentReuse remembers every fragment a round encoded
// from rows and sent; a later round of the same batch that encodes the same
// rows for the same table and write names that fragment instead. The
// fragment is the write's own (its ledger holds it), was never named by a
// published state, and its bytes are exactly what the new encoding would
// be: only its name differs from a fresh one, and nothing reads meaning
// into a fragment's name.
//
// An entry can be reused only once the round that sent its fragment has
// been flushed without error (confirm): until then the object may not be
// durable. A fragment a round staged but did not send — a part settleChain
// replaced by a shared fragment, a deferred part — is dropped.
type fragmentReuse struct {
	mu      sync.Mutex
	entries []*reuseEntry
}

// reuseEntry is one fragment a round encoded from rows.
type reuseEntry struct {
	ledger  *storage.Ledger // the write that owns the fragment
	prefix  string
	cols    []table.Column
	dropped []bool // per column: no property (the encoder writes null)
	edge    bool
	rows    []Row
	frag    table.Fragment
	// durable: the round that sent it was flushed; gone: it was not sent.
	durable, gone bool
}

// maxReuseRows bounds the rows of a fragment the memo keeps: comparing
// rows costs their size, and a large fragment is a load's, which reuses
// its chunks by other means.
const maxReuseRows = maxDeferredRows

type reuseKey struct{}

func withReuse(ctx context.Context, r *fragmentReuse) context.Context {
	return context.WithValue(ctx, reuseKey{}, r)
}

func reuseOf(ctx context.Context) *fragmentReuse {
	r, _ := ctx.Value(reuseKey{}).(*fragmentReuse)
	return r
}

// droppedCols reports, per column of ts, whether the encoder writes null
// for it (no property of that name): with the columns, what decides how
// rows are encoded.
func droppedCols(ts table.Schema, props []*schema.Property, edge bool) []bool {
	out := make([]bool, len(ts.Columns))
	for i, c := range ts.Columns {
		switch {
		case c.Name == table.KeyColumn, edge && (c.Name == "src" || c.Name == "dst"):
		default:
			out[i] = snapshot.PropByName(props, c.Name) == nil
		}
	}
	return out
}

// find returns a durable fragment the write owning ctx's ledger sent for
// exactly these rows of this table, encoded the same way.
func (r *fragmentReuse) find(ctx context.Context, prefix string, ts table.Schema, rows []Row, props []*schema.Property, edge bool) (table.Fragment, bool) {
	if r == nil || len(rows) == 0 || len(rows) > maxReuseRows {
		return table.Fragment{}, false
	}
	ledger, dropped := storage.LedgerOf(ctx), droppedCols(ts, props, edge)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if !e.durable || e.gone || e.ledger != ledger || e.prefix != prefix || e.edge != edge ||
			!slices.Equal(e.cols, ts.Columns) || !slices.Equal(e.dropped, dropped) || !sameImages(e.rows, rows) {
			continue
		}
		return e.frag, true
	}
	return table.Fragment{}, false
}

// add remembers a fragment just encoded from rows under ctx (pending until
// confirm).
func (r *fragmentReuse) add(ctx context.Context, prefix string, ts table.Schema, rows []Row, props []*schema.Property, edge bool, f table.Fragment) {
	if r == nil || len(rows) == 0 || len(rows) > maxReuseRows {
		return
	}
	e := &reuseEntry{ledger: storage.LedgerOf(ctx), prefix: prefix, cols: slices.Clone(ts.Columns),
		dropped: droppedCols(ts, props, edge), edge: edge, rows: rows, frag: f}
	r.mu.Lock()
	r.entries = append(r.entries, e)
	r.mu.Unlock()
}

// drop marks the fragments of keys as not sent.
func (r *fragmentReuse) drop(keys map[string]bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if keys[e.frag.Key] || (e.frag.Index != "" && keys[e.frag.Index]) {
			e.gone = true
		}
	}
}

// confirm marks every fragment sent so far as durable: the caller flushed
// the round's batch without error.
func (r *fragmentReuse) confirm() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		e.durable = true
	}
}

// sameImages: the same images in the same order, value for value (stricter
// than rowsEqual: the encoding of one is the encoding of the other).
func sameImages(a, b []Row) bool {
	return slices.EqualFunc(a, b, func(x, y Row) bool {
		if x.ID != y.ID || x.Src != y.Src || x.Dst != y.Dst || len(x.Values) != len(y.Values) {
			return false
		}
		for k, v := range x.Values {
			w, ok := y.Values[k]
			if !ok || !reflect.DeepEqual(v, w) {
				return false
			}
		}
		return true
	})
}
