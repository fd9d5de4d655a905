// Package value is the Go representation of property values and the one
// place they are converted, compared and encoded:
//
//   - value.go: the representation of each schema kind (see the table
//     there), Blob, and the table-column form (ToColumn, FromColumn).
//   - convert.go: raw JSON to the value model — load input (ConvertJSON)
//     and query/mutation parameters (ConvertParam) through one converter
//     that differs only where the language spec says the sources differ —
//     and Coerce, which moves a converted value to a property's type.
//   - compare.go: a total order (Compare) and tuple keys (TupleKey).
//   - json.go: the JSON encoding of results and exports (EncodeJSON,
//     AppendExportJSON); format.go: the human rendering for messages.
//
// Guarantees: every bad value is a *Error whose Msg matches
// spec/languages.md and whose Reason is the same words for the same bad
// value on every path (load, query --params, mutate --params); callers
// branch on the type, never on text. Nothing here does I/O or holds state.
//
// Caveats: conversion does not apply row constraints (nullability, enum
// membership) or the external-blob policy; a Blob given as a URI comes back
// as Blob{URI: ...} for the caller to admit or deny.
package value
