package value

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error reports a value that cannot be converted to its declared type.
// Msg is the complete user-facing message in the spec's wording (it names
// the property or parameter); Reason is the part that says what is wrong
// with the value, identical for the same bad value whichever path brought
// it (load input, a query parameter, a mutation parameter); Name is the
// property or parameter, with "[i]" for a list element.
type Error struct {
	Name   string
	Reason string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// ErrUnsupportedValue marks a value the store cannot hold (an external blob
// URI: the store keeps managed bytes only).
var ErrUnsupportedValue = errors.New("unsupported value")

// UndeclaredHint adds to a missing-parameter error (ConvertParam's "not
// provided") the given parameters the query does not declare — a misspelt
// name is the usual cause; undeclared parameters are otherwise ignored, as
// the language says. Other errors pass unchanged.
func UndeclaredHint(err error, params map[string]any, declared func(string) bool) error {
	var ve *Error
	if !errors.As(err, &ve) || ve.Reason != "not provided" {
		return err
	}
	var extra []string
	for k := range params {
		if !declared(k) {
			extra = append(extra, "'"+k+"'")
		}
	}
	if len(extra) == 0 {
		return err
	}
	slices.Sort(extra)
	hint := *ve
	hint.Msg = fmt.Sprintf("%s (the query does not declare %s)", ve.Msg, strings.Join(extra, ", "))
	return &hint
}
