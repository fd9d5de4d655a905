package query

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// addFixtureSeeds adds the project's example queries and, when present, the
// shared reference queries (never skipping: the target's own corpus lives in
// testdata/fuzz, so it really fuzzes in CI).
func addFixtureSeeds(f *testing.F) {
	files := []string{"../../examples/social/queries.gq", "../../examples/social/mutations.gq"}
	if d := fixture.Optional("cookbooks"); d != "" {
		m, _ := filepath.Glob(filepath.Join(d, "*", "queries", "*.gq"))
		files = append(files, m...)
	}
	if d := fixture.Optional("upstream"); d != "" {
		m, _ := filepath.Glob(filepath.Join(d, "*.gq"))
		files = append(files, m...)
	}
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(`query q($v: Vector(4)) { match { $d: Doc  not { $d.title = "x" } } return { $d.slug } order { nearest($d.embedding, $v) } limit 1 }`)
	f.Add(`query q() { match { $p: Person  $p $w:<knows>{1,2} $f } return { count($w) } }`)
	f.Add("query q() { match { $p: Person { name: \"a\\q\" } } }")
}

// FuzzParse: the parser never panics or hangs, and every error has a
// non-empty span inside the source.
func FuzzParse(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Parse("fuzz.gq", src)
		if list, ok := err.(ErrorList); ok {
			if len(list) > MaxErrors {
				t.Fatalf("%d errors exceed the cap", len(list))
			}
			for _, e := range list {
				if e.Span.End <= e.Span.Start || (len(src) > 0 && e.Span.Start >= len(src)+1) {
					t.Fatalf("bad span %+v for %q", e.Span, src)
				}
			}
		}
	})
}

// FuzzCheck: type checking and lowering never panic; a query that compiles
// yields a plan whose dump is non-empty.
func FuzzCheck(f *testing.F) {
	addFixtureSeeds(f)
	cat := testCatalog(f)
	f.Fuzz(func(t *testing.T, src string) {
		file, _ := Compile(cat, "fuzz.gq", src)
		for _, p := range file.Plans {
			if p.String() == "" {
				t.Fatal("empty plan dump")
			}
		}
		_ = Lint(cat, "s.pg", "fuzz.gq", src)
	})
}
