// Package boot builds an omnigraph-server configuration from a cluster's
// applied state: the graphs the ledger names, their stored queries from the
// content-addressed catalog, and the Cedar policy bundles adapted to the
// server's Authorizer. It adds no engine logic and reads nothing a cluster
// apply has not published.
//
// # Guarantees
//
//   - Cluster-global problems (no or invalid ledger, missing or tampered
//     catalog payloads, a scope bound twice, no applied graph) refuse the
//     boot with an error.
//   - A graph with a pending recovery sidecar is handed to the server as
//     quarantined (with the reason), like a graph that does not open or whose
//     stored queries no longer type-check: 404 when served, a boot refusal
//     with RequireAllGraphs.
//   - A policy-enabled cluster (any bundle applied) installs an Authorizer in
//     which a graph without a bundle is read-only and graph_list is decided
//     by the cluster-bound bundle (denied when there is none).
package boot
