// Package mcp is omnigraph's Model Context Protocol server: one graph's
// schema, reads, writes, branches, commits, diffs and change feed as MCP
// tools and resources, and every stored query of the graph as a typed tool
// of its own (docs/mcp.md).
//
// It holds no engine logic. Everything goes through a Backend, which this
// package declares and *remote.Client implements: the HTTP API of
// omnigraph-server, over the network (`omnigraph mcp --server`) or in
// process (remote.InProcess) to a server built over an embedded graph
// (`omnigraph mcp --store`) or to the serving server itself
// (POST /graphs/{id}/mcp). So every transport answers with the same bodies,
// and bearer auth, Cedar policy, admission and the mapping of errors to
// statuses stay where they are decided, in internal/server.
//
// Promises:
//   - A failed tool call is a tool result with IsError set, never a
//     protocol error: its structured content is the ErrorOutput the HTTP
//     route answered (error, code and at most one structured field), its
//     text the error message, and _meta["omnigraph/status"] the HTTP status.
//     Input the tool's schema refuses is a 400 bad_request body of the same
//     shape, raised before the backend is asked anything.
//   - A successful call carries the route's JSON body as structured content
//     and a short text rendering (a table for rows, a one-line summary
//     otherwise).
//   - The tool list is fixed when the server is built: the built-in tools,
//     then one tool per entry of the stored-query catalog the caller may
//     read.
//
// Caveats: resources (the schema and the branch list) cannot carry tool
// errors; a failed read is a JSON-RPC error whose data is the ErrorOutput.
package mcp
