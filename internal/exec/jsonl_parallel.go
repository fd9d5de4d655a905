package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// parseBlockLines and parseBlockBytes bound one parse job: a block ends
// at whichever is reached first, so wide lines do not make blocks large.
const (
	parseBlockLines = 512
	parseBlockBytes = 64 << 10
)

// parseBlock is a run of consecutive input lines and, once parsed, their
// records; err is a read error after the block's lines (final).
type parseBlock struct {
	lines []int  // input line number of each line
	text  []byte // the lines back to back
	ends  []int  // where each line ends in text
	recs  []Record
	errs  []error
	err   error
	done  chan struct{}
	mem   *blockRecords // the records' arrays, recycled once consumed (reuse)
}

// blockRecords are the arrays a parse worker fills for one block: its
// records (the interface values and the node and edge arenas they point
// to), their errors and the typed records' cells. With reuse a block's
// arrays go back to the workers once its records are consumed: they are
// most of what a load allocates per input line (about 170 bytes an edge,
// every one with pointers, cleared on allocation either way).
type blockRecords struct {
	recs  []Record
	errs  []error
	nodes []NodeRecord
	edges []EdgeRecord
	cells []table.Cell
}

// take returns arrays for a block of n lines, nodes of them expected to
// be nodes: mem's, cleared, where they are large enough.
func (m *blockRecords) take(n, nodes int) {
	m.recs, m.errs = reuseCleared(m.recs, n), reuseCleared(m.errs, n)
	m.nodes, m.edges = reuseCleared(m.nodes, nodes)[:0], reuseCleared(m.edges, n-nodes)[:0]
}

// reuseCleared returns s with length n, zeroed (the arenas' spare
// capacity too: carve hands out zero elements), or a new slice when s is
// too short.
func reuseCleared[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	clear(s[:cap(s)])
	return s[:n]
}

// eachRecord calls fn with every record of r in input order, as Next
// returns them, parsing lines on workers goroutines (parsing is most of a
// reader's CPU). The first error — a bad line, an I/O error, fn's or ctx's
// — stops it, and is the one Next would have returned first: blocks are
// consumed in order and a block's lines in order. Memory is bounded by the
// blocks in flight (about 3 × workers, each ≤ parseBlockBytes of text or
// parseBlockLines lines, plus one line).
func (r *Reader) eachRecord(ctx context.Context, workers int, fn func(Record) error) error {
	return r.eachRecordAhead(ctx, workers, false, nil, fn)
}

// eachRecordAhead is eachRecord that also hands each parsed block to
// ahead, if set, before fn sees its first record: a look at what is
// coming (a load warms the cache lines its lookups will read). ahead must
// not change anything fn depends on; nil entries are lines that failed.
//
// With reuse, a record and its Cells are valid only until fn returns
// (the caller keeps no record, no pointer into one and no Cells slice;
// strings may be kept: they are never in the recycled arrays), and the
// parse workers refill the arrays of a consumed block for a later one
// (blockRecords).
func (r *Reader) eachRecordAhead(ctx context.Context, workers int, reuse bool, ahead func([]Record), fn func(Record) error) error {
	if workers <= 1 {
		for {
			rec, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nodeShapes, edgeShapes := typedShapes(r.cat)
	jobs := make(chan *parseBlock, workers)
	order := make(chan *parseBlock, 2*workers)
	var free chan *blockRecords // consumed blocks' arrays (reuse)
	if reuse {
		free = make(chan *blockRecords, 4*workers)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prevNodes, prevLines := 0, 0
			for b := range jobs {
				// A block's lines are in one buffer no one writes again, so
				// strings may alias it; its records come from two arenas
				// (a block of edges costs one allocation, not one a line).
				// The arena guess is the previous block's mix.
				var mem *blockRecords
				select {
				case mem = <-free:
				default:
					mem = new(blockRecords)
				}
				n := len(b.ends)
				mem.take(n, nodeGuess(n, prevNodes, prevLines))
				b.recs, b.errs = mem.recs, mem.errs
				lr := Reader{cat: r.cat, names: r.names, alias: true, cellsPerBlock: 4096,
					nodeShapes: nodeShapes, edgeShapes: edgeShapes, nodes: mem.nodes, edges: mem.edges, cells: mem.cells[:0]}
				start := 0
				for i, end := range b.ends {
					lr.line = b.lines[i]
					b.recs[i], b.errs[i] = lr.parseLine(b.text[start:end:end])
					start = end
				}
				prevNodes, prevLines = len(lr.nodes), n
				mem.nodes, mem.edges, mem.cells = lr.nodes, lr.edges, lr.cells
				if reuse {
					b.mem = mem
				}
				close(b.done)
			}
		}()
	}
	// The producer reads lines (cheap) and hands out blocks; a block goes
	// to the workers and, in input order, to the consumer.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		// A block's buffer is sized by the last block's bytes: a block
		// usually ends at parseBlockLines short lines (edges: ~22 KiB),
		// and a buffer of parseBlockBytes for it allocated and zeroed three
		// times what it held.
		guess := parseBlockBytes + 4<<10
		for {
			b := &parseBlock{done: make(chan struct{}), lines: make([]int, 0, parseBlockLines)}
			// The block's lines are copied into one buffer (parsed values
			// never alias it: strings are copied out).
			var buf []byte
			ends := make([]int, 0, parseBlockLines)
			size, full := 0, false
			for !full {
				line, err := r.readLine()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						b.err = err
					}
					break
				}
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				if buf == nil {
					buf = make([]byte, 0, max(guess, len(line)))
				}
				buf = append(buf, line...)
				ends = append(ends, len(buf))
				b.lines = append(b.lines, r.line)
				size += len(line)
				full = len(b.lines) == parseBlockLines || size >= parseBlockBytes
			}
			guess = min(len(buf)+len(buf)/8+4<<10, parseBlockBytes+4<<10)
			b.text, b.ends = buf, ends
			last := !full
			select {
			case jobs <- b:
			case <-ctx.Done():
				return
			}
			select {
			case order <- b:
			case <-ctx.Done():
				return
			}
			if last {
				return
			}
		}
	}()
	err := func() error {
		for b := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			select {
			case <-b.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if ahead != nil {
				ahead(b.recs)
			}
			for i, rec := range b.recs {
				if b.errs[i] != nil {
					return b.errs[i]
				}
				if err := fn(rec); err != nil {
					return err
				}
			}
			if b.err != nil {
				return b.err
			}
			if b.mem != nil {
				b.recs, b.errs = nil, nil
				select {
				case free <- b.mem:
				default:
				}
			}
		}
		return ctx.Err()
	}()
	cancel()
	// Drain so the producer and the workers finish before returning.
	for range order {
	}
	wg.Wait()
	return err
}

// nodeGuess is the node arena size for a block of n lines after a block of
// prevLines lines held prevNodes nodes: the same share (inputs come in long
// runs of one kind; a record that does not fit is allocated on its own).
func nodeGuess(n, prevNodes, prevLines int) int {
	if prevLines == 0 {
		return n / 2
	}
	return min(n, prevNodes*n/prevLines)
}
