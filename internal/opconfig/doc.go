// Package opconfig reads the operator's own configuration
// (spec/surfaces.md §1.7): ~/.omnigraph/config.yaml (or $OMNIGRAPH_HOME) with
// servers, profiles, defaults, clusters and aliases, and the credentials file
// that holds bearer tokens.
//
// # Guarantees
//
//   - An absent config file is an empty config. Unknown keys are reported as
//     warnings and the rest still loads; malformed YAML is an error.
//   - config.yaml never holds tokens. Tokens live in the credentials file,
//     which is created with mode 0600 and written by temp file + rename; a
//     credentials file readable by group or others is refused, not read.
//   - Token lookup for a request URL is, for the servers: entry NAME whose
//     URL prefixes it: $OMNIGRAPH_TOKEN_<NAME> (upper-cased, '-' → '_'), then
//     [NAME] in the credentials file, then $OMNIGRAPH_BEARER_TOKEN; a URL no
//     entry matches uses only $OMNIGRAPH_BEARER_TOKEN.
package opconfig
