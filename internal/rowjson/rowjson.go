// Package rowjson writes read results as JSON documents a row at a time.
//
// A document is a head object's fields, a "rows" array of row objects
// (keys in column order) and a tail object's fields, byte for byte what
// encoding/json's Marshal (compact) or MarshalIndent(v, "", "  ")
// (indented) prints for one struct holding all three, so a result can be
// written without holding its rows. Rows are written through a buffer;
// End flushes it.
package rowjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Row encodes one result row as a JSON object whose keys keep column
// order (Go maps would sort them).
func Row(cols []string, vals []any) ([]byte, error) {
	var b bytes.Buffer
	if err := appendRow(&b, cols, vals); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func appendRow(b *bytes.Buffer, cols []string, vals []any) error {
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(c)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(vals[i])
		if err != nil {
			return fmt.Errorf("column %s: %w", c, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return nil
}

// Doc is one document being written.
type Doc struct {
	w      *bufio.Writer
	indent bool
	cols   []string
	tail   []byte // the tail's fields, with their leading comma
	n      int
	row    bytes.Buffer // one row's compact encoding
	ind    bytes.Buffer // its indented form
}

// Begin writes head's fields and opens the rows array. head and tail are
// structs (or maps) marshaled as JSON objects; tail's fields follow the
// array. Rows written are objects over cols.
func Begin(w io.Writer, indent bool, head, tail any, cols []string) (*Doc, error) {
	d := &Doc{w: bufio.NewWriterSize(w, 64<<10), indent: indent, cols: cols}
	h, err := d.marshal(head)
	if err != nil {
		return nil, err
	}
	t, err := d.marshal(tail)
	if err != nil {
		return nil, err
	}
	// Strip head's closing brace (after a newline when indented) and
	// tail's braces, keeping tail's inner fields.
	close := 1
	if indent {
		close = 2
	}
	h = bytes.TrimSuffix(h, []byte("}"))
	sep := ","
	if len(h) == 1 { // {} : no field before "rows"
		sep = ""
	} else {
		h = h[:len(h)-(close-1)]
	}
	if len(t) > 2 { // not {}
		inner := t[1 : len(t)-close]
		d.tail = append([]byte(","), inner...)
	}
	d.w.Write(h)
	if indent {
		d.w.WriteString(sep + "\n  \"rows\": [")
	} else {
		d.w.WriteString(sep + "\"rows\":[")
	}
	return d, nil
}

func (d *Doc) marshal(v any) ([]byte, error) {
	if d.indent {
		return json.MarshalIndent(v, "", "  ")
	}
	return json.Marshal(v)
}

// Row writes one row.
func (d *Doc) Row(vals []any) error {
	d.row.Reset()
	if err := appendRow(&d.row, d.cols, vals); err != nil {
		return err
	}
	if d.n > 0 {
		d.w.WriteByte(',')
	}
	d.n++
	if !d.indent {
		_, err := d.w.Write(d.row.Bytes())
		return err
	}
	d.ind.Reset()
	if err := json.Indent(&d.ind, d.row.Bytes(), "    ", "  "); err != nil {
		return err
	}
	d.w.WriteString("\n    ")
	_, err := d.w.Write(d.ind.Bytes())
	return err
}

// End closes the array, writes the tail's fields, the closing brace and a
// newline, and flushes.
func (d *Doc) End() error {
	if d.indent {
		if d.n > 0 {
			d.w.WriteString("\n  ")
		}
		d.w.WriteByte(']')
		d.w.Write(d.tail)
		d.w.WriteString("\n}\n")
	} else {
		d.w.WriteByte(']')
		d.w.Write(d.tail)
		d.w.WriteString("}\n")
	}
	return d.w.Flush()
}

// Flush writes out what is buffered (for a document cut short by an
// error: what was written reaches the reader, which sees no closing
// brace).
func (d *Doc) Flush() error { return d.w.Flush() }
