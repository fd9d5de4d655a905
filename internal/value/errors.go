package value

import "errors"

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
