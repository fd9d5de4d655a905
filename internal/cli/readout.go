package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/rowjson"
)

type targetJSON struct {
	Branch   *string `json:"branch"`
	Snapshot *string `json:"snapshot"`
}

func targetOf(t omnigraph.Target) targetJSON {
	if t.Snapshot != "" {
		return targetJSON{Snapshot: strPtr(t.Snapshot)}
	}
	b := t.Branch
	if b == "" {
		b = "main"
	}
	return targetJSON{Branch: &b}
}

// readRows is a read result for writeRead: held (a ReadResult) or
// streamed (a ReadStream). each yields its rows in order and may be
// called more than once; the row slice is reused between calls of fn.
type readRows struct {
	name   string
	cols   []string
	n      int
	commit string
	each   func(fn func(row []any) error) error
}

func heldRead(res *omnigraph.ReadResult) readRows {
	return readRows{name: res.QueryName, cols: res.Columns, n: len(res.Rows), commit: res.Commit.ID,
		each: func(fn func(row []any) error) error {
			for _, r := range res.Rows {
				if err := fn(r); err != nil {
					return err
				}
			}
			return nil
		}}
}

func streamedRead(st *omnigraph.ReadStream) readRows {
	return readRows{name: st.QueryName, cols: st.Columns, n: st.RowCount, commit: st.Commit.ID, each: st.Rows}
}

// writeRead renders a read result in one of the formats of spec/surfaces.md
// §1.5, row by row: a streamed result is never held whole. An error while
// the rows are read (a deadline, a write error) ends the output where it
// is; once part of a --json document has reached stdout, the error goes
// to stderr only, so stdout never holds two documents.
func (a *app) writeRead(format string, t omnigraph.Target, res readRows) error {
	switch format {
	case "json":
		head := struct {
			QueryName string     `json:"query_name"`
			Target    targetJSON `json:"target"`
			RowCount  int        `json:"row_count"`
			Columns   []string   `json:"columns,omitempty"`
		}{res.name, targetOf(t), res.n, res.cols}
		tail := struct {
			GraphCommitID string `json:"graph_commit_id,omitempty"`
		}{res.commit}
		out := &startedWriter{w: a.io.Out}
		doc, err := rowjson.Begin(out, true, head, tail, res.cols)
		if err != nil {
			return err
		}
		err = res.each(doc.Row)
		if err == nil {
			err = doc.End()
		} else if out.n > 0 {
			_ = doc.Flush()
		}
		a.printedJSON = out.n > 0
		return err
	case "jsonl":
		meta := struct {
			Kind      string     `json:"kind"`
			QueryName string     `json:"query_name"`
			Target    targetJSON `json:"target"`
			RowCount  int        `json:"row_count"`
		}{"metadata", res.name, targetOf(t), res.n}
		w := bufio.NewWriterSize(a.io.Out, 64<<10)
		if err := json.NewEncoder(w).Encode(meta); err != nil {
			return err
		}
		err := res.each(func(r []any) error {
			b, err := rowjson.Row(res.cols, r)
			if err != nil {
				return err
			}
			w.Write(b)
			return w.WriteByte('\n')
		})
		return errors.Join(err, w.Flush())
	case "csv":
		w := csv.NewWriter(a.io.Out)
		if err := w.Write(res.cols); err != nil {
			return err
		}
		rec := make([]string, len(res.cols))
		err := res.each(func(r []any) error {
			for i, v := range r {
				rec[i] = cellText(v)
			}
			return w.Write(rec)
		})
		w.Flush()
		return errors.Join(err, w.Error())
	case "kv":
		w := bufio.NewWriterSize(a.io.Out, 64<<10)
		fmt.Fprintf(w, "%s: %s\n", res.name, plural(res.n, "row"))
		i := 0
		err := res.each(func(r []any) error {
			i++
			fmt.Fprintf(w, "\nrow %d\n", i)
			for j, c := range res.cols {
				fmt.Fprintf(w, "  %s: %s\n", c, cellText(r[j]))
			}
			return nil
		})
		return errors.Join(err, w.Flush())
	default:
		width, wrap := 80, false
		if cfg, err := a.operator(); err == nil {
			if cfg.Defaults.TableMaxColumnWidth > 0 {
				width = cfg.Defaults.TableMaxColumnWidth
			}
			wrap = cfg.Defaults.TableCellLayout == "wrap"
		}
		return writeTable(a.io.Out, res, width, wrap)
	}
}

// startedWriter counts the bytes that reached w.
type startedWriter struct {
	w io.Writer
	n int64
}

func (s *startedWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// cellText renders one JSON-encoded value as plain text: strings bare,
// null empty, everything else as JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// writeTable prints a fitted text table. Cells longer than maxWidth are
// cut with "…", or with wrap continued on following lines of the row.
// Column widths depend on every row, so the rows are read twice: once to
// measure, once to print.
func writeTable(out io.Writer, res readRows, maxWidth int, wrap bool) error {
	w := bufio.NewWriterSize(out, 64<<10)
	fmt.Fprintf(w, "%s (%s)\n", res.name, plural(res.n, "row"))
	if res.n == 0 {
		fmt.Fprintln(w, "(no rows)")
		return w.Flush()
	}
	// cells[j] holds the lines of one cell (one line unless wrapped).
	cells := make([][]string, len(res.cols))
	fill := func(r []any) {
		for j, v := range r {
			text := strings.ReplaceAll(cellText(v), "\n", " ")
			if wrap {
				cells[j] = wrapText(text, maxWidth)
			} else {
				cells[j] = []string{truncate(text, maxWidth)}
			}
		}
	}
	widths := make([]int, len(res.cols))
	measure := func(row [][]string) {
		for j, c := range row {
			for _, l := range c {
				widths[j] = max(widths[j], utf8.RuneCountInString(l))
			}
		}
	}
	head := make([][]string, len(res.cols))
	for j, c := range res.cols {
		head[j] = []string{c}
	}
	measure(head)
	if err := res.each(func(r []any) error {
		fill(r)
		measure(cells)
		return nil
	}); err != nil {
		return err
	}
	var b strings.Builder
	line := func(row [][]string) {
		height := 1
		for _, c := range row {
			height = max(height, len(c))
		}
		for k := 0; k < height; k++ {
			b.Reset()
			for j, c := range row {
				if j > 0 {
					b.WriteString("  ")
				}
				text := ""
				if k < len(c) {
					text = c[k]
				}
				b.WriteString(text)
				if j < len(row)-1 {
					b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(text)))
				}
			}
			fmt.Fprintln(w, b.String())
		}
	}
	line(head)
	sep := make([][]string, len(widths))
	for j, n := range widths {
		sep[j] = []string{strings.Repeat("-", n)}
	}
	line(sep)
	err := res.each(func(r []any) error {
		fill(r)
		line(cells)
		return nil
	})
	return errors.Join(err, w.Flush())
}

// wrapText splits s into lines of at most n runes.
func wrapText(s string, n int) []string {
	r := []rune(s)
	if len(r) <= n || n <= 0 {
		return []string{s}
	}
	var out []string
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return append(out, string(r))
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
