// Package cluster is the control plane of a multi-graph deployment: it reads
// cluster.yaml (spec/surfaces.md §4) with the schema, stored-query and policy
// files it names, diffs that desired state against the ledger
// __cluster/state.json under the storage root, and converges the two.
//
// # Guarantees
//
//   - state.json is the single publish point. Every command that changes it
//     (import, refresh, apply) replaces it whole with one conditional put
//     (PutIfAbsent for the first ledger, PutIfMatch on the ETag read
//     otherwise); a concurrent writer makes the loser fail with
//     state_conflict and write nothing.
//   - apply writes every effect the new ledger names before the CAS: graphs
//     are initialized at their derived roots (<root>/graphs/<id>.omni) and
//     query and policy payloads are written content-addressed under
//     __cluster/resources/. If anything fails before the CAS the ledger is
//     unchanged byte for byte, so a server never boots a half-applied
//     cluster; the next apply adopts graphs already created (same schema)
//     and rewrites nothing that is already in place.
//   - Graph creates and approved deletes are fenced by recovery sidecars
//     (__cluster/recoveries/<ulid>.json). The sweep at the start of apply,
//     import and refresh retires, rolls forward or reports each one; a
//     deleted graph's root is removed only after the ledger no longer names
//     it.
//   - Deleting a graph needs an approval (`cluster approve graph.<id>`) bound
//     to the desired config digest and the graph's applied entries; any drift
//     makes it stale.
//   - With state.lock (default true) plan, apply, import and refresh hold
//     __cluster/lock.json (created with PutIfAbsent); only force-unlock with
//     the exact lock id removes a lock that is not one's own.
//   - LoadApplied gives a server exactly the applied revision, with every
//     catalog payload re-verified against its digest.
//
// # Caveats
//
//   - This build cannot migrate the schema of an existing graph: such a change
//     is planned as deferred and apply reports converged=false.
//   - Embedding providers are validated and recorded, not contacted.
//   - Catalog payloads of deleted resources are never garbage-collected.
package cluster
