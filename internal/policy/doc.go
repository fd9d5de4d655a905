// Package policy reads Omnigraph policy files (YAML, spec/surfaces.md §3.2),
// compiles them to Cedar with cedar-go, and decides requests.
//
// # Guarantees
//
//   - Parsing is strict: an unknown field anywhere, a duplicate key, a
//     missing version, an undeclared group, an unknown action, a branch scope
//     on an action it does not apply to, or a rule mixing graph_list with
//     per-graph actions is a *FileError listing every problem found (each
//     with its YAML line), and nothing is compiled.
//   - Every (rule, action) pair becomes exactly one Cedar permit policy with
//     id "<rule_id>:<action>", validated in Cedar strict mode against the
//     fixed Omnigraph schema (Schema). There are no forbid policies: what no
//     rule permits is denied.
//   - Decisions are pure functions of the compiled bundle and the request: an
//     actor in no group is denied ("unknown actor") without consulting Cedar;
//     otherwise Cedar decides and the matched rule is the smallest rule id
//     among the determining policies.
//
// # Caveats
//
//   - The package knows nothing about tokens, HTTP or runtime states (open,
//     default-deny); callers map those onto Decide.
//   - A bundle is compiled for one resource (a graph id, or the server for
//     graph_list bundles); a bundle bound to several graphs is compiled once
//     per graph.
package policy
