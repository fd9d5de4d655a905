package snapshot

import "errors"

// CheckError reports a derived structure of a snapshot (an image, a
// fragment layout, a lookup) that disagrees with the table's from-scratch
// decode: a bug in this package, never a user error.
type CheckError struct {
	Table  string // table key
	Detail string
}

func (e *CheckError) Error() string { return "snapshot check: " + e.Table + ": " + e.Detail }

// UnknownTypeError reports a node or edge type the catalog does not declare.
type UnknownTypeError struct {
	Kind string // "node" or "edge"
	Name string
}

func (e *UnknownTypeError) Error() string { return "unknown " + e.Kind + " type '" + e.Name + "'" }

// UnknownPropertyError reports a property a type does not declare (Type is
// "" when the caller does not know the type's name).
type UnknownPropertyError struct {
	Type string
	Prop string
}

func (e *UnknownPropertyError) Error() string {
	if e.Type == "" {
		return "unknown property '" + e.Prop + "'"
	}
	return "unknown property '" + e.Prop + "' of type '" + e.Type + "'"
}

// errTooMany stops a scan gathering more anchors than a partial snapshot
// holds (scan.go); it never leaves the package.
var errTooMany = errors.New("snapshot: too many anchors")
