// Package server is omnigraph-server's HTTP API (spec/surfaces.md §2) over
// the public Go API: it adds routing, authentication, authorization,
// admission and wire shapes, and no engine logic.
//
// Promises:
//   - One route table (routes.go) drives the ServeMux patterns, the handler
//     pipeline and /openapi.json, so the served routes and the document
//     cannot drift (TestOpenAPIMatchesRoutes).
//   - Every request runs the same pipeline in one order: request id →
//     bearer auth → graph resolution → request parsing → authorization
//     (every decision logged with actor, action, branch, allowed, rule id)
//     → per-actor admission for writes → the handler. A handler's work runs
//     only after all of its checks pass (route.go, plan).
//   - Bearer tokens are SHA-256 hashed at New and compared in constant
//     time; the actor is only ever the token's, never client-supplied.
//   - Every error response is an ErrorOutput whose status is decided by one
//     function, errorResponse (errors.go), on error types, never text.
//   - Each graph has one shared, warm handle; the server holds no other
//     state across requests but the admission counters.
//   - Request bodies are capped (1 MiB, 32 MiB for loads; 413); NDJSON loads
//     stream into the loader and exports stream out in 64 KiB chunks, so
//     memory per request is bounded by the limits, not the data.
//
// Caveats: admission is per process; several server processes on one graph
// are safe (the ref CAS is the only authority) but each has its own
// budget. Routes whose engine features do not exist yet (the change feed,
// schema apply, embeddings) are not served.
package server
