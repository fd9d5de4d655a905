package query

import (
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// File is a compiled .gq file: every query that parsed, type-checked and
// lowered, in source order.
type File struct {
	Filename string
	Ast      *Ast
	Plans    []*Plan
	byName   map[string]*Plan
}

// Compile parses, type-checks and lowers every query of src against cat.
// It always returns a File holding the queries that compiled; the error,
// if non-nil, is an ErrorList of every diagnostic (parse errors first by
// position, then each query's type and plan errors). When two queries share
// a name the first wins (spec §5.1).
func Compile(cat *schema.Catalog, filename, src string) (*File, error) {
	ast, perr := Parse(filename, src)
	var errs ErrorList
	if perr != nil {
		errs = append(errs, perr.(ErrorList)...)
	}
	f := &File{Filename: filename, Ast: ast, byName: map[string]*Plan{}}
	for _, q := range ast.Queries {
		plan, qerrs := checkQuery(cat, filename, src, q)
		errs = append(errs, qerrs...)
		if plan == nil {
			continue
		}
		f.Plans = append(f.Plans, plan)
		if _, dup := f.byName[q.Name]; !dup {
			f.byName[q.Name] = plan
		}
	}
	return f, errs.Err()
}

// CheckQuery type-checks and lowers one parsed query.
func CheckQuery(cat *schema.Catalog, filename, src string, q *QueryDecl) (*Plan, error) {
	plan, errs := checkQuery(cat, filename, src, q)
	return plan, errs.Err()
}

// Names lists the declared query names in source order (duplicates once),
// including queries that failed to compile.
func (f *File) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range f.Ast.Queries {
		if !seen[q.Name] {
			seen[q.Name] = true
			out = append(out, q.Name)
		}
	}
	return out
}

// Query returns the compiled plan named name, or a *NotFoundError (which
// wraps ErrQueryNotFound) listing the available names.
func (f *File) Query(name string) (*Plan, error) {
	if p, ok := f.byName[name]; ok {
		return p, nil
	}
	return nil, &NotFoundError{Name: name, Available: f.Names()}
}

// CompileQuery compiles src and selects one query by name. Errors in other
// queries of the file do not prevent selecting a valid one; an error in the
// selected query (or a syntax error that hid it) is returned.
func CompileQuery(cat *schema.Catalog, filename, src, name string) (*Plan, error) {
	f, err := Compile(cat, filename, src)
	if p, ok := f.byName[name]; ok {
		return p, nil
	}
	if err != nil {
		var mine ErrorList
		for _, e := range err.(ErrorList) {
			if e.Query == name || e.Query == "" {
				mine = append(mine, e)
			}
		}
		if len(mine) > 0 {
			return nil, mine
		}
	}
	return nil, &NotFoundError{Name: name, Available: f.Names()}
}
