package server

import (
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/rowjson"
)

// Wire types of the HTTP API (spec/surfaces.md §2.4). Field tags drive
// both encoding and the /openapi.json schemas: `openapi:"required"` marks
// a required property; a pointer or omitempty field is optional, and a
// pointer is also nullable.

// HealthOutput is GET /healthz.
type HealthOutput struct {
	Status                string  `json:"status" openapi:"required"`
	Version               string  `json:"version" openapi:"required"`
	InternalSchemaVersion int     `json:"internal_schema_version" openapi:"required"`
	SourceVersion         *string `json:"source_version,omitempty"`
}

// GraphInfo is one served graph.
type GraphInfo struct {
	GraphID string `json:"graph_id" openapi:"required"`
	URI     string `json:"uri" openapi:"required"`
}

// GraphListResponse is GET /graphs.
type GraphListResponse struct {
	Graphs []GraphInfo `json:"graphs" openapi:"required"`
}

// SnapshotDatasetOutput is one table of a snapshot. DatasetPath is the
// table key ("node:Person"); PublishedDatasetVersion is the height of the
// snapshot's commit (tables carry no version counter of their own).
type SnapshotDatasetOutput struct {
	EntityKind              string `json:"entity_kind" openapi:"required"`
	TypeName                string `json:"type_name" openapi:"required"`
	DatasetPath             string `json:"dataset_path" openapi:"required"`
	PublishedDatasetVersion int64  `json:"published_dataset_version" openapi:"required"`
	EntityCount             int64  `json:"entity_count" openapi:"required"`
}

// SnapshotOutput is GET /snapshot.
type SnapshotOutput struct {
	GraphBranch           string                  `json:"graph_branch" openapi:"required"`
	GraphCommitID         string                  `json:"graph_commit_id" openapi:"required"`
	GraphManifestVersion  int64                   `json:"graph_manifest_version" openapi:"required"`
	InternalSchemaVersion int                     `json:"internal_schema_version" openapi:"required"`
	Datasets              []SnapshotDatasetOutput `json:"datasets" openapi:"required"`
}

// QueryRequest is POST /query.
type QueryRequest struct {
	Query    string         `json:"query" openapi:"required"`
	Name     *string        `json:"name,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
	Branch   *string        `json:"branch,omitempty"`
	Snapshot *string        `json:"snapshot,omitempty"`
}

// ReadRequest is the deprecated POST /read.
type ReadRequest struct {
	QuerySource string         `json:"query_source" openapi:"required"`
	QueryName   *string        `json:"query_name,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
	Branch      *string        `json:"branch,omitempty"`
	Snapshot    *string        `json:"snapshot,omitempty"`
}

// ReadTargetOutput names what a read saw.
type ReadTargetOutput struct {
	Branch   *string `json:"branch,omitempty"`
	Snapshot *string `json:"snapshot,omitempty"`
}

// ReadOutput is the result of a read. Rows are objects keyed by column
// name, in column order.
type ReadOutput struct {
	LegacyReadOutput
	GraphCommitID *string `json:"graph_commit_id,omitempty"`
}

// LegacyReadOutput is ReadOutput without graph_commit_id (POST /read).
type LegacyReadOutput struct {
	QueryName string           `json:"query_name" openapi:"required"`
	Target    ReadTargetOutput `json:"target" openapi:"required"`
	RowCount  int              `json:"row_count" openapi:"required"`
	Columns   []string         `json:"columns,omitempty"`
	Rows      []orderedRow     `json:"rows" openapi:"required"`
}

// ChangeRequest is POST /mutate (and the deprecated /change). The legacy
// names query_source and query_name are accepted as aliases.
type ChangeRequest struct {
	Query       string         `json:"query" openapi:"required"`
	Name        *string        `json:"name,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
	Branch      *string        `json:"branch,omitempty"`
	QuerySource *string        `json:"query_source,omitempty" openapi:"-"`
	QueryName   *string        `json:"query_name,omitempty" openapi:"-"`
}

// CommitOutput describes one commit. CreatedAt is Unix microseconds.
type CommitOutput struct {
	GraphCommitID        string  `json:"graph_commit_id" openapi:"required"`
	GraphBranch          *string `json:"graph_branch,omitempty"`
	GraphManifestVersion int64   `json:"graph_manifest_version" openapi:"required"`
	ParentCommitID       *string `json:"parent_commit_id,omitempty"`
	MergedParentCommitID *string `json:"merged_parent_commit_id,omitempty"`
	ActorID              *string `json:"actor_id,omitempty"`
	CreatedAt            int64   `json:"created_at" openapi:"required"`
}

// ChangeOutput is the result of a mutation; Commit is null when nothing
// changed.
type ChangeOutput struct {
	QueryName     string        `json:"query_name" openapi:"required"`
	Branch        string        `json:"branch" openapi:"required"`
	AffectedNodes int64         `json:"affected_nodes" openapi:"required"`
	AffectedEdges int64         `json:"affected_edges" openapi:"required"`
	ActorID       *string       `json:"actor_id,omitempty"`
	Commit        *CommitOutput `json:"commit"`
	// Warnings (an addition to the reference shape, absent when empty)
	// report what failed beside the write, which itself succeeded: an
	// automatic compaction.
	Warnings []string `json:"warnings,omitempty"`
}

// ParamDescriptor is one declared parameter of a stored query.
type ParamDescriptor struct {
	Name      string  `json:"name" openapi:"required"`
	Kind      string  `json:"kind" openapi:"required"`
	ItemKind  *string `json:"item_kind,omitempty"`
	VectorDim *int    `json:"vector_dim,omitempty"`
	Nullable  bool    `json:"nullable" openapi:"required"`
}

// QueryCatalogEntry is one stored query.
type QueryCatalogEntry struct {
	Name        string            `json:"name" openapi:"required"`
	ToolName    string            `json:"tool_name" openapi:"required"`
	Description *string           `json:"description,omitempty"`
	Instruction *string           `json:"instruction,omitempty"`
	Mutation    bool              `json:"mutation" openapi:"required"`
	Params      []ParamDescriptor `json:"params" openapi:"required"`
}

// QueriesCatalogOutput is GET /queries.
type QueriesCatalogOutput struct {
	Queries []QueryCatalogEntry `json:"queries" openapi:"required"`
}

// InvokeStoredQueryRequest is the optional body of POST /queries/{name}.
type InvokeStoredQueryRequest struct {
	Params         map[string]any `json:"params,omitempty"`
	Branch         *string        `json:"branch,omitempty"`
	Snapshot       *string        `json:"snapshot,omitempty"`
	ExpectMutation *bool          `json:"expect_mutation,omitempty"`
}

// SchemaOutput is GET /schema.
type SchemaOutput struct {
	SchemaSource string `json:"schema_source" openapi:"required"`
}

// IngestRequest is POST /load (and the deprecated /ingest): NDJSON in a
// JSON string.
type IngestRequest struct {
	Data   string  `json:"data" openapi:"required"`
	Branch *string `json:"branch,omitempty"`
	From   *string `json:"from,omitempty"`
	Mode   *string `json:"mode,omitempty" openapi:"enum=overwrite|append|merge"`
}

// GraphBatchDeclarationOutput counts the records of one type a load read.
type GraphBatchDeclarationOutput struct {
	Name           string `json:"name" openapi:"required"`
	EntitiesLoaded int64  `json:"entities_loaded" openapi:"required"`
}

// IngestOutput is the result of POST /load and /ingest: the graph's URI,
// then GraphBatchLoadOutput.
type IngestOutput struct {
	URI string `json:"uri" openapi:"required"`
	GraphBatchLoadOutput
}

// GraphBatchLoadOutput is the result of POST /load/ndjson.
type GraphBatchLoadOutput struct {
	Branch        string                        `json:"branch" openapi:"required"`
	BaseBranch    *string                       `json:"base_branch,omitempty"`
	BranchCreated bool                          `json:"branch_created" openapi:"required"`
	Mode          string                        `json:"mode" openapi:"required,enum=overwrite|append|merge"`
	Nodes         []GraphBatchDeclarationOutput `json:"nodes" openapi:"required"`
	Edges         []GraphBatchDeclarationOutput `json:"edges" openapi:"required"`
	TotalEntities int64                         `json:"total_entities" openapi:"required"`
	ActorID       *string                       `json:"actor_id,omitempty"`
	Commit        *CommitOutput                 `json:"commit"`
	// Warnings: as ChangeOutput.Warnings.
	Warnings []string `json:"warnings,omitempty"`
}

// ExportRequest is POST /export; unknown fields are refused.
type ExportRequest struct {
	Branch    *string  `json:"branch,omitempty"`
	Snapshot  *string  `json:"snapshot,omitempty"`
	TypeNames []string `json:"type_names,omitempty"`
}

// BranchListOutput is GET /branches.
type BranchListOutput struct {
	Branches []string `json:"branches" openapi:"required"`
}

// BranchCreateRequest is POST /branches.
type BranchCreateRequest struct {
	Name string  `json:"name" openapi:"required"`
	From *string `json:"from,omitempty"`
}

// BranchCreateOutput is the result of POST /branches.
type BranchCreateOutput struct {
	URI     string  `json:"uri" openapi:"required"`
	From    string  `json:"from" openapi:"required"`
	Name    string  `json:"name" openapi:"required"`
	ActorID *string `json:"actor_id,omitempty"`
}

// BranchDeleteOutput is the result of DELETE /branches/{branch}.
type BranchDeleteOutput struct {
	URI     string  `json:"uri" openapi:"required"`
	Name    string  `json:"name" openapi:"required"`
	ActorID *string `json:"actor_id,omitempty"`
}

// BranchMergeRequest is POST /branches/merge.
type BranchMergeRequest struct {
	Source       string  `json:"source" openapi:"required"`
	Target       *string `json:"target,omitempty"`
	DeleteBranch bool    `json:"delete_branch,omitempty"`
}

// BranchMergeOutput is the result of a merge. BranchDeleted is present
// only when delete_branch was asked; BranchDeleteError iff it is false.
type BranchMergeOutput struct {
	Source            string        `json:"source" openapi:"required"`
	Target            string        `json:"target" openapi:"required"`
	Outcome           string        `json:"outcome" openapi:"required,enum=already_up_to_date|fast_forward|merged"`
	ActorID           *string       `json:"actor_id,omitempty"`
	Commit            *CommitOutput `json:"commit,omitempty"`
	BranchDeleted     *bool         `json:"branch_deleted,omitempty"`
	BranchDeleteError *string       `json:"branch_delete_error,omitempty"`
}

// CommitListOutput is GET /commits, newest first.
type CommitListOutput struct {
	Commits []CommitOutput `json:"commits" openapi:"required"`
}

// ChangeTypeOutput names a changed entity's type.
type ChangeTypeOutput struct {
	ID   string `json:"id" openapi:"required"`
	Name string `json:"name" openapi:"required"`
}

// ChangeEndpointsOutput are an edge image's endpoints.
type ChangeEndpointsOutput struct {
	From string `json:"from" openapi:"required"`
	To   string `json:"to" openapi:"required"`
}

// ChangeImageOutput is an entity's user properties before or after a change.
type ChangeImageOutput struct {
	Properties map[string]any         `json:"properties" openapi:"required"`
	Endpoints  *ChangeEndpointsOutput `json:"endpoints,omitempty"`
}

// EntityChangeOutput is one changed entity.
type EntityChangeOutput struct {
	Kind   string             `json:"kind" openapi:"required,enum=node|edge"`
	Type   ChangeTypeOutput   `json:"type" openapi:"required"`
	ID     string             `json:"id" openapi:"required"`
	Op     string             `json:"op" openapi:"required,enum=insert|update|delete"`
	Before *ChangeImageOutput `json:"before,omitempty"`
	After  *ChangeImageOutput `json:"after,omitempty"`
}

// ChangeCauseOutput is the commit that caused a block of changes.
type ChangeCauseOutput struct {
	GraphCommitID        string  `json:"graph_commit_id" openapi:"required"`
	ParentCommitID       *string `json:"parent_commit_id,omitempty"`
	MergedParentCommitID *string `json:"merged_parent_commit_id,omitempty"`
	AuthoredBranch       string  `json:"authored_branch" openapi:"required"`
	ActorID              *string `json:"actor_id,omitempty"`
	AuthoredAt           int64   `json:"authored_at" openapi:"required"`
}

// CommitChangesOutput is one page of GET /commits/{id}/changes.
type CommitChangesOutput struct {
	Cause         ChangeCauseOutput    `json:"cause" openapi:"required"`
	Changes       []EntityChangeOutput `json:"changes" openapi:"required"`
	NextPageToken *string              `json:"next_page_token,omitempty"`
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func commitOutput(c omnigraph.CommitInfo) CommitOutput {
	return CommitOutput{
		GraphCommitID:        c.ID,
		GraphBranch:          strPtr(c.Branch),
		GraphManifestVersion: c.ManifestVersion,
		ParentCommitID:       strPtr(c.Parent),
		MergedParentCommitID: strPtr(c.MergedParent),
		ActorID:              strPtr(c.Actor),
		CreatedAt:            micros(c.CreatedAt),
	}
}

func commitOutputPtr(c *omnigraph.CommitInfo) *CommitOutput {
	if c == nil {
		return nil
	}
	o := commitOutput(*c)
	return &o
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// orderedRow is a result row whose JSON object keeps column order.
type orderedRow struct {
	cols []string
	vals []any
}

// MarshalJSON writes the row as an object in column order.
func (r orderedRow) MarshalJSON() ([]byte, error) { return rowjson.Row(r.cols, r.vals) }
