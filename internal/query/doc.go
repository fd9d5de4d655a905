// Package query compiles the Omnigraph query language (.gq): a hand-written
// lexer and recursive-descent parser produce an AST with byte spans on every
// token and node, a type checker validates it against a schema catalog
// (spec/languages.md §5–§6), and lowering turns each checked query into a
// logical plan (plan.go) that the executor runs.
//
// Guarantees:
//   - Parsing never panics on any input and never recurses deeper than
//     MaxDepth; errors are collected (at most MaxErrors, one per line), each
//     with a byte span, and rendered "parse error: …".
//   - A File returned by Compile without error contains only queries that
//     parsed, type-checked and lowered; every type error carries its T-code
//     (type error: T<n>: …) where the spec assigns one.
//   - Plans are plain values: deterministic String() dumps, no references to
//     the catalog beyond type names, safe to share between goroutines once
//     built (nothing mutates them).
//   - Ordering plans always end with the total tie-break of §5.6 (every bound
//     variable's id, variables sorted by name), so ordered results are
//     deterministic.
//
// Caveats:
//   - Parameter values are not known at compile time; runtime conversion of
//     params (§5.2) is the executor's job (see ParamSpec).
//   - Where upstream defers an error to run time but the outcome is already
//     decidable (a ranking function that is not the first order key, ordering
//     by a non-output expression), the compiler rejects the query early with a
//     "plan error".
//   - Expressions have no operators besides the single comparison of a filter
//     clause (the language has no arithmetic, OR or parentheses), so the
//     expression parser is a primary parser plus one binary level.
package query
