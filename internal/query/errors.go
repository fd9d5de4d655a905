package query

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrorKind says which compiler stage rejected a query; it selects the
// rendered prefix ("parse error", "type error", "plan error").
type ErrorKind uint8

const (
	// KindParse marks lexical and syntax errors.
	KindParse ErrorKind = iota + 1
	// KindType marks type-checking errors (spec §6), coded or uncoded.
	KindType
	// KindPlan marks errors found while lowering to a plan (for example
	// the D₂ rule), still before any I/O.
	KindPlan
)

func (k ErrorKind) String() string {
	switch k {
	case KindParse:
		return "parse error"
	case KindType:
		return "type error"
	case KindPlan:
		return "plan error"
	}
	return "error"
}

// Error is one compiler diagnostic. Code is a spec code such as "T7" (empty
// for uncoded errors); Span is a byte range in the source, never empty.
type Error struct {
	Kind  ErrorKind
	Code  string
	Msg   string
	Query string // name of the query being compiled, "" for file-level errors
	File  string
	Span  Span
	Line  int // 1-based, computed from Span.Start
	Col   int // 1-based byte column
}

// Error renders "<kind>: [<code>: ]<msg>"; parse errors append their
// position because, unlike type errors, their text alone rarely locates them.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	b.WriteString(": ")
	if e.Code != "" {
		b.WriteString(e.Code)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Kind == KindParse && e.Line > 0 {
		fmt.Fprintf(&b, " at %d:%d", e.Line, e.Col)
	}
	return b.String()
}

// ErrorList is a list of diagnostics sorted by position. It implements error.
type ErrorList []*Error

// Error renders the first diagnostic and how many more follow.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
}

// Unwrap exposes every diagnostic to errors.Is/As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Err returns nil for an empty list, else the list itself.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// sortList orders diagnostics by position; stable so equal positions keep
// discovery order.
func (l ErrorList) sortList() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Span.Start < l[j].Span.Start })
}

// ErrQueryNotFound is wrapped by File.Query when no query has the name.
var ErrQueryNotFound = errors.New("query not found")

// NotFoundError reports a missing query and the names that do exist.
type NotFoundError struct {
	Name      string
	Available []string
}

func (e *NotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("query '%s' not found (the file declares no queries)", e.Name)
	}
	return fmt.Sprintf("query '%s' not found; available: %s", e.Name, strings.Join(e.Available, ", "))
}

// Unwrap makes errors.Is(err, ErrQueryNotFound) hold.
func (e *NotFoundError) Unwrap() error { return ErrQueryNotFound }

// lineCol computes the 1-based line and byte column of off in src.
func lineCol(src string, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line, col := 1, 1
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// widen makes a zero-width span one byte wide (spec §1) where possible.
func widen(s Span, srcLen int) Span {
	if s.End <= s.Start {
		s.End = s.Start + 1
		if s.End > srcLen && s.Start > 0 {
			s.Start, s.End = srcLen-1, srcLen
		}
	}
	return s
}
