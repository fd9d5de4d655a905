package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// FuzzCompile checks that Compile never panics or hangs, and that its
// result is always exactly one of a catalog or a well-formed ErrorList.
func FuzzCompile(f *testing.F) {
	// Seeds: the corpus in testdata/fuzz/FuzzCompile (always there, so the
	// target really fuzzes in CI), the project's example, and the shared
	// reference schemas when they are present.
	for _, file := range append(optionalFixtureSchemas(), "../../examples/social/schema.pg") {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, chunk := range seedChunks(string(src), 1500) {
			f.Add(chunk)
		}
	}
	f.Add(fullSchema)
	f.Add("node A { x: F64 @range(x, -1.5..) @range(x, ..2) }")
	f.Add(`node A { s: enum(a-b, 0) t: String @check(t, "\t\\") }`)
	f.Add("interface I { x: String @key }\nnode A implements I { }\nedge E: A -> A @card(0..1) { @unique(src, dst) }")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Compile("f.pg", src)
		if (c == nil) == (err == nil) {
			t.Fatalf("catalog %v and error %v", c != nil, err)
		}
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 || len(list) > MaxErrors {
				t.Fatalf("bad error list: %v", err)
			}
			for _, e := range list {
				if e.Span.End <= e.Span.Start || e.Pos.Line < 1 || e.Pos.Col < 1 || e.Msg == "" {
					t.Fatalf("bad error %+v", e)
				}
			}
			return
		}
		// A valid catalog recompiles to the same shape.
		c2, err := Compile("f.pg", c.Source)
		if err != nil || len(c2.Nodes) != len(c.Nodes) || len(c2.Edges) != len(c.Edges) {
			t.Fatalf("recompile differs: %v", err)
		}
		for _, n := range c.Nodes {
			for _, k := range n.Key {
				if _, ok := n.Prop(k); !ok {
					t.Fatalf("key %s.%s missing", n.Name, k)
				}
			}
		}
	})
}

// seedChunks splits a schema into runs of whole declarations of about max
// bytes. Small seeds keep the fuzzer productive: it minimizes every new
// interesting input, and minimizing a 27 KB schema stalls it for its whole
// -fuzzminimizetime budget.
func seedChunks(src string, max int) []string {
	var chunks []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(src, "\n") {
		startsDecl := strings.HasPrefix(line, "node ") || strings.HasPrefix(line, "edge ") || strings.HasPrefix(line, "interface ")
		if startsDecl && cur.Len() >= max {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	if cur.Len() > 0 {
		chunks = append(chunks, cur.String())
	}
	return chunks
}

func BenchmarkCompileLargestCookbook(b *testing.B) {
	src, err := os.ReadFile(fixture.Dir(b, "cookbooks", "vc-os", "schema.pg"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("schema.pg", string(src)); err != nil {
			b.Fatal(err)
		}
	}
}

// optionalFixtureSchemas lists the shared reference schemas, or none when
// the fixtures are absent (never skipping).
func optionalFixtureSchemas() []string {
	var out []string
	if d := fixture.Optional("cookbooks"); d != "" {
		m, _ := filepath.Glob(filepath.Join(d, "*", "schema.pg"))
		out = append(out, m...)
	}
	if d := fixture.Optional("upstream"); d != "" {
		m, _ := filepath.Glob(filepath.Join(d, "*.pg"))
		out = append(out, m...)
	}
	return out
}
