package server

// Common error statuses of the route families (401 and 403 are added to
// every protected route).
var (
	readStatuses  = []int{400, 404}
	writeStatuses = []int{400, 404, 409, 413, 415, 429}
)

func graphPath(p string) string { return "/graphs/{graph_id}" + p }

var (
	branchParam   = param{name: "branch", desc: "Branch to read (default main). Mutually exclusive with snapshot."}
	snapshotParam = param{name: "snapshot", desc: "Commit id to read (time travel). Mutually exclusive with branch."}
	blobHeaders   = []param{{name: "If-Match", desc: "Strong entity-tag list or *; a mismatch is 412."},
		{name: "If-None-Match", desc: "Weak entity-tag list or *; a match is 304."},
		{name: "Range", desc: "One bytes= range; anything else is ignored."},
		{name: "If-Range", desc: "A strong entity tag; on mismatch the whole blob is sent."}}
	ifCommitParam = param{name: ifGraphCommitHeader, required: true, desc: "The commit id the branch head must be; otherwise 412 and nothing is written."}
)

// routeTable is the one list of served routes (the change feed and schema
// apply routes are in handlers_changes.go). Routes whose engine feature
// does not exist yet (embeddings) are absent, so they are neither served
// nor documented.
func (s *Server) routeTable() []*route {
	routes := []*route{
		{method: "GET", path: "/healthz", opID: "health", tag: "health", public: true,
			summary: "Liveness and version.", resp: HealthOutput{}, handle: s.handleHealth},
		{method: "GET", path: "/openapi.json", opID: "openapi", tag: "health", public: true,
			summary: "This OpenAPI 3.1 document (without security schemes on an open server).", respType: "application/json", handle: s.handleOpenAPI},
		{method: "GET", path: "/graphs", opID: "listGraphs", tag: "management",
			summary: "List the served graphs, sorted by id (action graph_list on the server).", resp: GraphListResponse{}, handle: s.handleListGraphs},

		{method: "GET", path: graphPath("/snapshot"), opID: "cluster_getSnapshot", tag: "graph", perGraph: true,
			summary: "The head commit of a branch (or a given commit) and every table's row count.",
			query:   []param{branchParam, snapshotParam}, resp: SnapshotOutput{}, statuses: readStatuses, handle: s.handleSnapshot},
		{method: "GET", path: graphPath("/schema"), opID: "cluster_getSchema", tag: "graph", perGraph: true,
			summary: "The accepted .pg schema source of main.", resp: SchemaOutput{}, handle: s.handleSchema},
		{method: "POST", path: graphPath("/query"), opID: "cluster_query", tag: "queries", perGraph: true,
			summary: "Run an inline read query (mutations are refused with 400).",
			body:    QueryRequest{}, resp: ReadOutput{}, statuses: []int{400, 404, 413, 415}, handle: s.handleQuery},
		{method: "POST", path: graphPath("/read"), opID: "cluster_read", tag: "queries", perGraph: true, successor: "query",
			summary: "Deprecated alias of /query with the legacy field names.",
			body:    ReadRequest{}, resp: LegacyReadOutput{}, statuses: []int{400, 404, 413, 415}, handle: s.handleLegacyRead},
		{method: "POST", path: graphPath("/mutate"), opID: "cluster_mutate", tag: "queries", perGraph: true, gated: true,
			summary: "Run an inline mutation as one atomic commit.",
			body:    ChangeRequest{}, resp: ChangeOutput{}, statuses: writeStatuses, handle: s.handleMutate()},
		{method: "POST", path: graphPath("/mutate/if-graph-commit"), opID: "cluster_mutate_if_graph_commit", tag: "queries", perGraph: true, gated: true,
			summary:     "Run a mutation only if the branch head is the given commit (412 otherwise, never retried).",
			conditional: true, headers: []param{ifCommitParam}, body: ChangeRequest{}, resp: ChangeOutput{}, statuses: append([]int{412}, writeStatuses...), handle: s.handleMutate()},
		{method: "POST", path: graphPath("/change"), opID: "cluster_change", tag: "queries", perGraph: true, gated: true, successor: "mutate",
			summary: "Deprecated alias of /mutate.",
			body:    ChangeRequest{}, resp: ChangeOutput{}, statuses: writeStatuses, handle: s.handleMutate()},
		{method: "GET", path: graphPath("/queries"), opID: "cluster_list_queries", tag: "queries", perGraph: true,
			summary: "The graph's stored queries with their typed parameters.", resp: QueriesCatalogOutput{}, handle: s.handleListQueries},
		{method: "POST", path: graphPath("/queries/{name}"), opID: "cluster_invoke_query", tag: "queries", perGraph: true,
			summary: "Invoke a stored query by name (a caller without invoke_query gets the same 404 as for an unknown name).",
			body:    InvokeStoredQueryRequest{}, optionalBody: true, resp: ReadOutput{}, respAlt: ChangeOutput{},
			statuses: []int{400, 404, 409, 413, 415, 429}, handle: s.handleInvoke(false)},
		{method: "POST", path: graphPath("/queries/{name}/if-graph-commit"), opID: "cluster_invoke_query_if_graph_commit", tag: "queries", perGraph: true,
			summary:     "Invoke a stored mutation only if the branch head is the given commit.",
			conditional: true, headers: []param{ifCommitParam}, body: InvokeStoredQueryRequest{}, optionalBody: true, resp: ChangeOutput{},
			statuses: []int{400, 404, 409, 412, 413, 415, 429}, handle: s.handleInvoke(true)},
		{method: "POST", path: graphPath("/load"), opID: "cluster_load", tag: "data", perGraph: true, gated: true, loadLimit: true,
			summary: "Load graph-batch NDJSON given as a JSON string, as one commit (default mode merge).",
			body:    IngestRequest{}, resp: IngestOutput{}, statuses: writeStatuses, handle: s.handleIngest(false)},
		{method: "POST", path: graphPath("/load/ndjson"), opID: "cluster_loadNdjson", tag: "data", perGraph: true, gated: true, loadLimit: true,
			summary: "Load a raw application/x-ndjson body, streamed, as one commit.",
			query: []param{{name: "branch", desc: "Branch to load into (default main)."}, {name: "from", desc: "Create the branch from this branch or commit if it does not exist."},
				{name: "mode", desc: "append, merge (default) or overwrite.", enum: []string{"overwrite", "append", "merge"}}},
			body: ndjsonBody{}, resp: GraphBatchLoadOutput{}, statuses: writeStatuses, handle: s.handleLoadNDJSON},
		{method: "POST", path: graphPath("/ingest"), opID: "cluster_ingest", tag: "data", perGraph: true, gated: true, loadLimit: true, successor: "load",
			summary: "Deprecated alias of /load (from defaults to main).",
			body:    IngestRequest{}, resp: IngestOutput{}, statuses: writeStatuses, handle: s.handleIngest(true)},
		{method: "POST", path: graphPath("/export"), opID: "cluster_export", tag: "data", perGraph: true,
			summary: "Stream a branch (or commit) as graph-batch NDJSON that /load accepts.",
			body:    ExportRequest{}, respType: "application/x-ndjson", statuses: []int{400, 404, 413, 415}, handle: s.handleExport},
		{method: "GET", path: graphPath("/branches"), opID: "cluster_listBranches", tag: "branches", perGraph: true,
			summary: "List branches, sorted.", resp: BranchListOutput{}, handle: s.handleListBranches},
		{method: "POST", path: graphPath("/branches"), opID: "cluster_createBranch", tag: "branches", perGraph: true, gated: true,
			summary: "Create a branch from another branch or a commit (copies no data).",
			body:    BranchCreateRequest{}, resp: BranchCreateOutput{}, statuses: []int{400, 404, 409, 413, 415, 429}, handle: s.handleCreateBranch},
		{method: "POST", path: graphPath("/branches/merge"), opID: "cluster_mergeBranches", tag: "branches", perGraph: true, gated: true,
			summary: "Merge a branch into another (default main).",
			body:    BranchMergeRequest{}, resp: BranchMergeOutput{}, statuses: []int{400, 404, 409, 413, 415, 429}, handle: s.handleMerge},
		{method: "DELETE", path: graphPath("/branches/{branch...}"), opID: "cluster_deleteBranch", tag: "branches", perGraph: true, gated: true,
			summary: "Delete a branch (main cannot be deleted).", resp: BranchDeleteOutput{}, statuses: []int{400, 404, 409, 429}, handle: s.handleDeleteBranch},
		{method: "GET", path: graphPath("/blob"), opID: "cluster_getBlob", tag: "blobs", perGraph: true,
			summary: "One Blob cell: bytes with a strong ETag, If-Match / If-None-Match / Range / If-Range; an external blob redirects (302).",
			query:   blobParams, headers: blobHeaders, respType: "application/octet-stream", statuses: []int{302, 304, 400, 404, 412, 416}, handle: s.handleBlob(false)},
		{method: "HEAD", path: graphPath("/blob"), opID: "cluster_headBlob", tag: "blobs", perGraph: true,
			summary: "The status and headers GET /blob would return (Range and If-Range ignored).",
			query:   blobParams, headers: blobHeaders[:2], statuses: []int{302, 304, 400, 404, 412}, handle: s.handleBlob(true)},
		{method: "GET", path: graphPath("/commits"), opID: "cluster_listCommits", tag: "commits", perGraph: true,
			summary: "A branch's commits, newest first.", query: []param{{name: "branch", desc: "Branch (default main)."}},
			resp: CommitListOutput{}, statuses: readStatuses, handle: s.handleListCommits},
		{method: "GET", path: graphPath("/commits/{commit_id}"), opID: "cluster_getCommit", tag: "commits", perGraph: true,
			summary: "One commit.", resp: CommitOutput{}, statuses: []int{404}, handle: s.handleGetCommit},
		{method: "GET", path: graphPath("/commits/{commit_id}/changes"), opID: "cluster_getCommitChanges", tag: "commits", perGraph: true,
			summary: "What one commit changed relative to its first parent, paged.",
			query: []param{{name: "page_token", desc: "Continue from this token."}, {name: "limit", desc: "Changes per page (1..8192, default 1000; more is 413)."},
				{name: "kind", repeat: true, enum: []string{"node", "edge"}}, {name: "type", repeat: true}, {name: "op", repeat: true, enum: []string{"insert", "update", "delete"}}},
			resp: CommitChangesOutput{}, statuses: []int{400, 404, 409, 410, 413}, handle: s.handleCommitChanges},
	}
	routes = append(routes, changeRoutes(s)...)
	routes = append(routes, diffRoutes(s)...)
	routes = append(routes, reviewRoutes(s)...)
	return append(routes, mcpRoutes(s)...)
}
