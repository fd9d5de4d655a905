package schema

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a source position. Offset is a byte offset; Line and Col are
// 1-based, Col counting bytes (like go/token).
type Pos struct {
	Filename string
	Offset   int
	Line     int
	Col      int
}

// String renders the position as file:line:col.
func (p Pos) String() string {
	name := p.Filename
	if name == "" {
		name = "<schema>"
	}
	return fmt.Sprintf("%s:%d:%d", name, p.Line, p.Col)
}

// Span is a half-open byte range [Start, End) into the source. Spans of
// errors are never empty: a zero-width span is widened to one byte so that
// editors can underline something.
type Span struct {
	Start int
	End   int
}

// ErrorKind classifies a schema error; callers branch on it, never on text.
type ErrorKind uint8

const (
	// ParseError is a lexical or syntactic error, or a rule checked while
	// reading a single declaration (enum duplicates, Vector dimensions,
	// cardinality bounds).
	ParseError ErrorKind = iota + 1
	// CatalogError is a validation error of the schema as a whole:
	// duplicate or unknown names, annotation and constraint rules.
	CatalogError
	// Warning is not an error: the schema compiles, but something in it
	// is probably not what its author meant (Catalog.Warnings).
	Warning
)

func (k ErrorKind) String() string {
	switch k {
	case ParseError:
		return "parse error"
	case CatalogError:
		return "catalog error"
	case Warning:
		return "warning"
	default:
		return fmt.Sprintf("ErrorKind(%d)", uint8(k))
	}
}

// Error is one diagnostic about a .pg source.
type Error struct {
	Pos  Pos
	Span Span
	Kind ErrorKind
	Msg  string
}

// Error renders "file:line:col: parse error: msg" (or "catalog error").
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Kind, e.Msg)
}

// MaxErrors caps how many diagnostics one Compile reports; after that the
// input is almost certainly not a schema and more messages only add noise.
const MaxErrors = 10

// ErrorList is the error returned by Compile: at least one *Error, sorted by
// position, at most MaxErrors, and at most one per source line.
type ErrorList []*Error

// Error renders the first error and a count of the rest.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	case 2:
		return l[0].Error() + " (and 1 more error)"
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Unwrap exposes the individual errors to errors.As / errors.Is.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Detail renders every error, one per line.
func (l ErrorList) Detail() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// normalize sorts by position, keeps the first error of each line and caps
// the list. Same-line repeats are nearly always one mistake seen twice.
func (l ErrorList) normalize() ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	out := l[:0]
	for _, e := range l {
		if n := len(out); n > 0 && out[n-1].Pos.Filename == e.Pos.Filename && out[n-1].Pos.Line == e.Pos.Line {
			continue
		}
		out = append(out, e)
		if len(out) == MaxErrors {
			break
		}
	}
	return out
}

// lineIndex maps byte offsets to line/column positions.
type lineIndex struct {
	filename string
	starts   []int // byte offset of the first byte of each line
}

func newLineIndex(filename, src string) *lineIndex {
	li := &lineIndex{filename: filename, starts: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) Pos {
	line := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
	if line < 0 {
		line = 0
	}
	return Pos{Filename: li.filename, Offset: off, Line: line + 1, Col: off - li.starts[line] + 1}
}

func (li *lineIndex) newError(kind ErrorKind, sp Span, msg string) *Error {
	if sp.End <= sp.Start {
		sp.End = sp.Start + 1
	}
	return &Error{Pos: li.pos(sp.Start), Span: sp, Kind: kind, Msg: msg}
}
