package query

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

func loadCatalog(tb testing.TB, path string) *schema.Catalog {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := schema.Compile(filepath.Base(path), string(b))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return cat
}

// fixtureQueryFiles returns every (schema, query file) pair of the
// reference fixtures: each cookbook's queries against its schema.pg, and
// each upstream X.gq against X.pg.
func fixtureQueryFiles(tb testing.TB) [][2]string {
	tb.Helper()
	var out [][2]string
	cookbooks := fixture.Dir(tb, "cookbooks")
	dirs, _ := filepath.Glob(filepath.Join(cookbooks, "*", "schema.pg"))
	for _, s := range dirs {
		qs, _ := filepath.Glob(filepath.Join(filepath.Dir(s), "queries", "*.gq"))
		for _, q := range qs {
			out = append(out, [2]string{s, q})
		}
	}
	up, _ := filepath.Glob(filepath.Join(fixture.Dir(tb, "upstream"), "*.gq"))
	for _, q := range up {
		out = append(out, [2]string{strings.TrimSuffix(q, ".gq") + ".pg", q})
	}
	return out
}

// TestFixturesLintClean: every reference query file lints clean against its
// schema (none is invalid by the spec).
func TestFixturesLintClean(t *testing.T) {
	pairs := fixtureQueryFiles(t)
	if len(pairs) < 30 {
		t.Fatalf("found only %d fixture query files", len(pairs))
	}
	cats := map[string]*schema.Catalog{}
	total := 0
	for _, p := range pairs {
		cat, ok := cats[p[0]]
		if !ok {
			cat = loadCatalog(t, p[0])
			cats[p[0]] = cat
		}
		src, err := os.ReadFile(p[1])
		if err != nil {
			t.Fatal(err)
		}
		r := Lint(cat, p[0], p[1], string(src))
		total += r.QueriesProcessed
		if r.Status != "ok" {
			for _, res := range r.Results {
				if res.Status != "ok" {
					t.Errorf("%s: %s: %s", p[1], res.Name, res.Error)
				}
			}
			for _, f := range r.Findings {
				if f.Severity == "error" {
					t.Errorf("%s: %s", p[1], f.Message)
				}
			}
		}
		if r.QueriesProcessed == 0 {
			t.Errorf("%s: no queries", p[1])
		}
	}
	t.Logf("%d files, %d queries lint clean", len(pairs), total)
}

// largestCookbook returns the schema and source of the biggest cookbook
// query file.
func largestCookbook(tb testing.TB) (*schema.Catalog, string, string) {
	tb.Helper()
	var best [2]string
	var bestSize int64
	for _, p := range fixtureQueryFiles(tb) {
		if !strings.Contains(p[1], "cookbooks") {
			continue
		}
		if st, err := os.Stat(p[1]); err == nil && st.Size() > bestSize {
			best, bestSize = p, st.Size()
		}
	}
	src, err := os.ReadFile(best[1])
	if err != nil {
		tb.Fatal(err)
	}
	return loadCatalog(tb, best[0]), best[1], string(src)
}

func BenchmarkCompileLargestCookbook(b *testing.B) {
	cat, path, src := largestCookbook(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(cat, path, src); err != nil {
			b.Fatal(err)
		}
	}
}
