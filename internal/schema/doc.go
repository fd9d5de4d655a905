// Package schema compiles the Omnigraph schema language (.pg) into a
// Catalog: node, edge and interface types with typed properties,
// constraints, annotations and stable numeric ids.
//
// Compile is the single entry point. It runs a hand-written lexer
// (lexer.go; every token carries its byte span), a recursive-descent parser
// (parser.go) producing a small AST (ast.go), and a validator (compile.go)
// that applies every rule of spec/languages.md §2 and assembles the Catalog
// (catalog.go). NodeType.NodeID (nodeid.go) renders the canonical id of a
// keyed node (§2.6).
//
// Guarantees:
//   - Compile returns either a valid *Catalog or an ErrorList, never both.
//     An ErrorList holds 1..MaxErrors *Error values sorted by position, at
//     most one per source line, each with a byte Span, a Kind (ParseError or
//     CatalogError) and a message that names what was expected or which
//     rule was broken. Parse errors are reported without validation errors.
//   - Compile is deterministic: the same source yields the same ids and the
//     same errors. Type ids number nodes and edges in declaration order;
//     property ids number each type's properties alphabetically by name, so
//     composite keys are ordered alphabetically at creation.
//   - Compile terminates and does not panic on any input: the grammar has no
//     recursive productions, the source is capped at 1 MiB, and the parser
//     always consumes a token before retrying after an error (FuzzCompile).
//   - A Catalog is immutable after Compile and safe for concurrent readers.
//     Edge lookup falls back to a lowercase match, which is unambiguous
//     because case-folding collisions are rejected.
//
// Caveats:
//   - `@range(p, ..max)` means "at most max". The reference implementation
//     reads it as a minimum; we deliberately do not (see
//     docs/schema-language.md).
//   - Range bounds are held as float64, so integer bounds beyond ±2^53 lose
//     precision.
//   - Ids are the ids of a freshly created graph. Preserving ids across
//     schema evolution (renames, drops) is the job of the schema planner,
//     which owns the accepted catalog; Compile knows nothing of history and
//     only records @rename_from hints.
//   - Unknown annotations are kept verbatim as inert metadata.
package schema
