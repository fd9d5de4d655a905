package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph"
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

// writeRead renders a read result in one of the formats of spec/surfaces.md §1.5.
func (a *app) writeRead(format string, t omnigraph.Target, res *omnigraph.ReadResult) error {
	rows := make([]orderedRow, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = orderedRow{cols: res.Columns, vals: r}
	}
	switch format {
	case "json":
		out := struct {
			QueryName     string       `json:"query_name"`
			Target        targetJSON   `json:"target"`
			RowCount      int          `json:"row_count"`
			Columns       []string     `json:"columns,omitempty"`
			Rows          []orderedRow `json:"rows"`
			GraphCommitID string       `json:"graph_commit_id,omitempty"`
		}{res.QueryName, targetOf(t), len(rows), res.Columns, rows, res.Commit.ID}
		return a.printJSON(out)
	case "jsonl":
		meta := struct {
			Kind      string     `json:"kind"`
			QueryName string     `json:"query_name"`
			Target    targetJSON `json:"target"`
			RowCount  int        `json:"row_count"`
		}{"metadata", res.QueryName, targetOf(t), len(rows)}
		enc := json.NewEncoder(a.io.Out)
		if err := enc.Encode(meta); err != nil {
			return err
		}
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		w := csv.NewWriter(a.io.Out)
		if err := w.Write(res.Columns); err != nil {
			return err
		}
		for _, r := range res.Rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = cellText(v)
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		w.Flush()
		return w.Error()
	case "kv":
		fmt.Fprintf(a.io.Out, "%s: %s\n", res.QueryName, plural(len(rows), "row"))
		for i, r := range res.Rows {
			fmt.Fprintf(a.io.Out, "\nrow %d\n", i+1)
			for j, c := range res.Columns {
				fmt.Fprintf(a.io.Out, "  %s: %s\n", c, cellText(r[j]))
			}
		}
		return nil
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

// writeTable prints a header line, then a fitted text table; cells wider
// than maxWidth are truncated with an ellipsis.
// writeTable prints a fitted text table. Cells longer than maxWidth are
// cut with "…", or with wrap continued on following lines of the row.
func writeTable(w io.Writer, res *omnigraph.ReadResult, maxWidth int, wrap bool) error {
	fmt.Fprintf(w, "%s (%s)\n", res.QueryName, plural(len(res.Rows), "row"))
	if len(res.Rows) == 0 {
		_, err := fmt.Fprintln(w, "(no rows)")
		return err
	}
	// cells[i][j] holds the lines of one cell (one line unless wrapped).
	cells := make([][][]string, len(res.Rows)+1)
	head := make([][]string, len(res.Columns))
	for j, c := range res.Columns {
		head[j] = []string{c}
	}
	cells[0] = head
	for i, r := range res.Rows {
		row := make([][]string, len(r))
		for j, v := range r {
			text := strings.ReplaceAll(cellText(v), "\n", " ")
			if wrap {
				row[j] = wrapText(text, maxWidth)
			} else {
				row[j] = []string{truncate(text, maxWidth)}
			}
		}
		cells[i+1] = row
	}
	widths := make([]int, len(res.Columns))
	for _, row := range cells {
		for j, c := range row {
			for _, l := range c {
				widths[j] = max(widths[j], utf8.RuneCountInString(l))
			}
		}
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
	line(cells[0])
	sep := make([][]string, len(widths))
	for j, n := range widths {
		sep[j] = []string{strings.Repeat("-", n)}
	}
	line(sep)
	for _, row := range cells[1:] {
		line(row)
	}
	return nil
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
