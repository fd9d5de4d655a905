// Package omnigraph is the embeddable Go API of Omnigraph, a typed
// property-graph database with Git-style branches and commits across the
// whole graph, stored in a local directory or on S3-compatible object storage.
//
// Every write publishes through one atomic commit point: new immutable data
// files, then immutable metadata, then a compare-and-swap of the branch ref.
// Nothing a write does is visible before that swap and everything is after
// it, so a crash at any step leaves the graph at its old commit.
package omnigraph

import "github.com/omnigraph-go/omnigraph/internal/commit"

// Version is the release of this build. Release builds override it with
// -ldflags "-X github.com/omnigraph-go/omnigraph.Version=…".
var Version = "0.1.0-dev"

// FormatVersion is the on-disk graph format this build reads and writes
// (printed by `omnigraph version` as internal-schema). Open refuses any other.
const FormatVersion = commit.FormatCurrent
