package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
)

// benchJSONL generates n lines mixing the record shapes of a real load:
// keyed nodes, unkeyed nodes with lists/vectors/dates, and edges.
func benchJSONL(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		s := strconv.Itoa(i)
		switch i % 4 {
		case 0, 1:
			b.WriteString(`{"type": "Person", "data": {"name": "p` + s + `", "age": ` + strconv.Itoa(i%100) + `, "email": "p` + s + `@example.com", "role": "user"}}`)
		case 2:
			b.WriteString(`{"type": "Doc", "data": {"id": "d` + s + `", "title": "Document number ` + s + `", "tags": ["a", "b", "c"], "embedding": [0.1, 0.2, 0.3], "born": "2024-06-01", "at": "2024-06-01T12:00:00Z", "weight": 1.5}}`)
		case 3:
			b.WriteString(`{"edge": "Knows", "from": "p` + strconv.Itoa(i-3) + `", "to": "p` + strconv.Itoa(i-2) + `", "data": {"since": "2020-01-01"}}`)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkReadJSONL100k parses and converts a 100k-line stream.
func BenchmarkReadJSONL100k(b *testing.B) {
	data := benchJSONL(100_000)
	cat := testCatalog(b)
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), cat, ReaderOptions{})
		n := 0
		for {
			_, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100_000 {
			b.Fatalf("read %d records", n)
		}
	}
}

// BenchmarkValidate100k stages and validates the same stream as one
// overwrite against an empty graph.
func BenchmarkValidate100k(b *testing.B) {
	data := benchJSONL(100_000)
	cat := testCatalog(b)
	ctx := context.Background()
	d, _ := loadDeltaBytes(b, cat, data)
	for _, td := range d.Nodes {
		td.Replace = true
	}
	for _, td := range d.Edges {
		td.Replace = true
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(ctx, cat, NewMemState(), d); err != nil {
			b.Fatal(err)
		}
	}
}
