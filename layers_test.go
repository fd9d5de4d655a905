package omnigraph_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/omnigraph-go/omnigraph"

// layers ranks the project's packages: a package may import only packages of
// strictly lower rank, so dependencies flow downward (DESIGN.md §5) and the
// parsers and catalog depend on nothing below them.
var layers = map[string]int{
	"internal/failpoint": 0,
	"internal/policy":    1,
	"internal/opconfig":  1,
	"internal/remote":    1,
	"internal/embed":     1,
	"internal/fixture":   0,
	"internal/cache":     0,
	"internal/limits":    0,
	"internal/rowjson":   0, // encoding/json only: the CLI and server write read results with it
	"internal/console":   0,
	"internal/storage":   1,
	"internal/schema":    1,
	"internal/query":     3, // over internal/value (parameter checks)
	"internal/table":     2,
	"internal/value":     2,
	"internal/storeuri":  2, // the root installs the opener (no import of it)
	"internal/commit":    3,
	"internal/index":     3,
	"internal/snapshot":  4,
	"internal/integrity": 4,
	"internal/eval":      5,
	"internal/exec":      6,
	"":                   7, // the public API at the module root
	"internal/mcp":       7, // over internal/remote only; internal/server mounts it
	"internal/cluster":   8,
	"internal/server":    8,
	"internal/cli":       9,
	"internal/boot":      9,
	"cmd":                10,
	"bench":              10, // own modules (bench/sqlitepeer): over internal/fixture only
}

func rankOf(rel string) (int, bool) {
	best, bestLen, found := 0, -1, false
	for prefix, r := range layers {
		if rel == prefix || prefix != "" && strings.HasPrefix(rel, prefix+"/") {
			if len(prefix) > bestLen {
				best, bestLen, found = r, len(prefix), true
			}
		}
	}
	return best, found
}

// TestImportsPointDown fails when a package imports one at its own or a
// higher layer. Test files are exempt (tests may wire layers together), and a
// package's sub-packages (e.g. storagetest) share its rank.
func TestImportsPointDown(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			dir = ""
		}
		from, ok := rankOf(dir)
		if !ok {
			t.Errorf("%s: package %q has no layer; add it to layers", path, dir)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != modulePath && !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(p, modulePath), "/")
			to, ok := rankOf(rel)
			if !ok {
				t.Errorf("%s imports %s, which has no layer", path, p)
				continue
			}
			sameTree := rel == dir || strings.HasPrefix(dir, rel+"/") || strings.HasPrefix(rel, dir+"/") && dir != ""
			if to >= from && !sameTree {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must point down", path, from, p, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
