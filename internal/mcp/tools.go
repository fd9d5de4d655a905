package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// The built-in tools' inputs. Field tags give the input schema
// (jsonschema.For): a field without omitempty is required, unknown fields
// are refused. queryIn and branchMergeIn are the request bodies of
// internal/remote (QueryRequest, MergeRequest) field for field, with
// descriptions: the tools convert them, so the two cannot drift apart.

type schemaIn struct{}

type queryIn struct {
	Query    string         `json:"query" jsonschema:"the .gq source of one or more read queries"`
	Name     string         `json:"name,omitempty" jsonschema:"the query to run when the source defines several"`
	Params   map[string]any `json:"params,omitempty" jsonschema:"the query's parameters by name"`
	Branch   string         `json:"branch,omitempty" jsonschema:"branch to read (default main); exclusive with snapshot"`
	Snapshot string         `json:"snapshot,omitempty" jsonschema:"commit to read (an id, a unique id prefix, BRANCH~N or BRANCH^)"`
}

type mutateIn struct {
	Query    string         `json:"query" jsonschema:"the .gq source of one or more mutations (insert, update, delete)"`
	Name     string         `json:"name,omitempty" jsonschema:"the mutation to run when the source defines several"`
	Params   map[string]any `json:"params,omitempty" jsonschema:"the mutation's parameters by name"`
	Branch   string         `json:"branch,omitempty" jsonschema:"branch to write (default main)"`
	IfCommit string         `json:"if_commit,omitempty" jsonschema:"write only if the branch head is this commit id (otherwise 412, nothing written)"`
}

type loadIn struct {
	Data   string `json:"data" jsonschema:"graph-batch NDJSON: one {\"type\":T,\"data\":{...}} node or {\"edge\":E,\"from\":ID,\"to\":ID,\"data\":{...}} edge per line"`
	Branch string `json:"branch,omitempty" jsonschema:"branch to load into (default main)"`
	From   string `json:"from,omitempty" jsonschema:"create the branch from this branch or commit if it does not exist"`
	Mode   string `json:"mode,omitempty" jsonschema:"append (ids must be new), merge (default: insert or update by id) or overwrite (replace the branch's data)"`
}

type branchesListIn struct{}

type branchCreateIn struct {
	Name string `json:"name" jsonschema:"the new branch"`
	From string `json:"from,omitempty" jsonschema:"branch or commit to start from (default main)"`
}

type branchDeleteIn struct {
	Name string `json:"name" jsonschema:"the branch to delete (main cannot be deleted)"`
}

type branchMergeIn struct {
	Source       string `json:"source" jsonschema:"the branch to merge"`
	Target       string `json:"target,omitempty" jsonschema:"the branch to merge into (default main)"`
	DeleteBranch bool   `json:"delete_branch,omitempty" jsonschema:"delete the source branch after a successful merge"`
}

type commitsListIn struct {
	Branch string `json:"branch,omitempty" jsonschema:"branch (default main)"`
}

type scopeIn struct {
	Kind []string `json:"kind,omitempty" jsonschema:"only these entity kinds (node, edge)"`
	Type []string `json:"type,omitempty" jsonschema:"only these type names"`
	Op   []string `json:"op,omitempty" jsonschema:"only these operations (insert, update, delete)"`
}

type commitChangesIn struct {
	Commit    string `json:"commit" jsonschema:"the commit (an id, a unique prefix, BRANCH~N or BRANCH^)"`
	PageToken string `json:"page_token,omitempty" jsonschema:"continue from the next_page_token of the previous page"`
	Limit     int    `json:"limit,omitempty" jsonschema:"changes per page (1..8192, default 1000)"`
	scopeIn
}

type diffIn struct {
	FromBranch   string `json:"from_branch,omitempty" jsonschema:"the old side: a branch head (default main); exclusive with from_snapshot"`
	FromSnapshot string `json:"from_snapshot,omitempty" jsonschema:"the old side: a commit"`
	ToBranch     string `json:"to_branch,omitempty" jsonschema:"the new side: a branch head (default main); exclusive with to_snapshot"`
	ToSnapshot   string `json:"to_snapshot,omitempty" jsonschema:"the new side: a commit"`
	Limit        int    `json:"limit,omitempty" jsonschema:"most changes to return (1..8192, default 1000); total counts them all"`
}

type changesPollIn struct {
	Branch     string `json:"branch,omitempty" jsonschema:"branch to follow (default main)"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"resume after this cursor (from the previous poll)"`
	Start      string `json:"start,omitempty" jsonschema:"where to start without a cursor: now, beginning or after:<commit>"`
	PageToken  string `json:"page_token,omitempty" jsonschema:"continue a commit split across pages"`
	Limit      int    `json:"limit,omitempty" jsonschema:"changes per page (1..8192, default 1000)"`
	MaxCommits int    `json:"max_commits,omitempty" jsonschema:"commits per poll (0: no bound)"`
	scopeIn
}

// builtin is one built-in tool: its description, hints and work.
type builtin struct {
	name, title, desc string
	readOnly          bool
	destructive       bool
	schema            *jsonschema.Schema
	run               func(ctx context.Context, b Backend, raw json.RawMessage) (*sdk.CallToolResult, error)
}

// newBuiltin types a tool: its schema from In, its arguments decoded into
// In after they pass the schema.
func newBuiltin[In any](name, title, desc string, readOnly, destructive bool, enums map[string][]any,
	run func(ctx context.Context, b Backend, in In) (json.RawMessage, string, error)) builtin {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic("mcp: schema of " + name + ": " + err.Error())
	}
	for prop, values := range enums {
		ps := s.Properties[prop]
		if ps.Items != nil {
			ps = ps.Items // a repeatable filter: each item is one of values
		}
		ps.Enum = values
	}
	return builtin{name: name, title: title, desc: desc, readOnly: readOnly, destructive: destructive, schema: s,
		run: func(ctx context.Context, b Backend, raw json.RawMessage) (*sdk.CallToolResult, error) {
			var in In
			if err := decodeArgs(raw, &in); err != nil {
				return nil, err
			}
			body, text, err := run(ctx, b, in)
			if err != nil {
				return nil, err
			}
			return success(body, text), nil
		}}
}

var scopeEnums = map[string][]any{"kind": {"node", "edge"}, "op": {"insert", "update", "delete"}}

// builtins are the graph's fixed tools, in the order they are listed.
func builtins() []builtin {
	return []builtin{
		newBuiltin("schema_get", "Graph schema", "The graph's accepted .pg schema source on main: node types with their properties, edge types with their endpoints, keys and constraints. Read it before writing queries.",
			true, false, nil, func(ctx context.Context, b Backend, _ schemaIn) (json.RawMessage, string, error) {
				src, err := b.Schema(ctx)
				if err != nil {
					return nil, "", err
				}
				return mustJSON(map[string]string{"schema_source": src}), src, nil
			}),
		newBuiltin("query", "Run a read query", "Run a .gq read query (match … return …) on a branch head or a past commit; rows come back as JSON objects keyed by column. Mutations are refused: use mutate.",
			true, false, nil, func(ctx context.Context, b Backend, in queryIn) (json.RawMessage, string, error) {
				out, err := b.Query(ctx, remote.QueryRequest(in))
				if err != nil {
					return nil, "", err
				}
				raw := mustJSON(out)
				return raw, decoded(raw, renderRows), nil
			}),
		newBuiltin("mutate", "Run a mutation", "Run a .gq mutation (insert, update, delete) as one atomic commit on a branch. Read queries are refused: use query.",
			false, true, nil, func(ctx context.Context, b Backend, in mutateIn) (json.RawMessage, string, error) {
				raw, err := b.Mutate(ctx, remote.ChangeRequest{Query: in.Query, Name: in.Name, Params: in.Params, Branch: in.Branch}, in.IfCommit)
				return raw, decoded(raw, renderChange), err
			}),
		newBuiltin("load", "Load NDJSON", "Load graph-batch NDJSON into a branch as one commit; the whole batch is validated before anything is published.",
			false, true, map[string][]any{"mode": {"append", "merge", "overwrite"}}, func(ctx context.Context, b Backend, in loadIn) (json.RawMessage, string, error) {
				raw, err := b.LoadNDJSON(ctx, strings.NewReader(in.Data), in.Branch, in.From, in.Mode)
				return raw, decoded(raw, renderLoad), err
			}),
		newBuiltin("branches_list", "List branches", "The graph's branches, sorted.",
			true, false, nil, func(ctx context.Context, b Backend, _ branchesListIn) (json.RawMessage, string, error) {
				names, err := b.Branches(ctx)
				if err != nil {
					return nil, "", err
				}
				if names == nil {
					names = []string{}
				}
				return mustJSON(map[string][]string{"branches": names}), "branches: " + strings.Join(names, ", "), nil
			}),
		newBuiltin("branches_create", "Create a branch", "Create a branch from another branch or a commit; no data is copied.",
			false, false, nil, func(ctx context.Context, b Backend, in branchCreateIn) (json.RawMessage, string, error) {
				raw, err := b.CreateBranch(ctx, in.Name, in.From)
				from := in.From
				if from == "" {
					from = "main"
				}
				return raw, "created branch " + in.Name + " from " + from, err
			}),
		newBuiltin("branches_merge", "Merge branches", "Merge a branch into another (default main): fast-forward or a three-way merge commit; conflicts are refused with every conflict listed.",
			false, true, nil, func(ctx context.Context, b Backend, in branchMergeIn) (json.RawMessage, string, error) {
				raw, err := b.Merge(ctx, remote.MergeRequest(in))
				return raw, decoded(raw, renderMerge), err
			}),
		newBuiltin("branches_delete", "Delete a branch", "Delete a branch (main cannot be deleted). Its commits stay readable by id until cleanup.",
			false, true, nil, func(ctx context.Context, b Backend, in branchDeleteIn) (json.RawMessage, string, error) {
				raw, err := b.DeleteBranch(ctx, in.Name)
				return raw, "deleted branch " + in.Name, err
			}),
		newBuiltin("commits_list", "List commits", "A branch's commits, newest first.",
			true, false, nil, func(ctx context.Context, b Backend, in commitsListIn) (json.RawMessage, string, error) {
				raw, err := b.Commits(ctx, in.Branch)
				return raw, decoded(raw, renderCommits), err
			}),
		newBuiltin("commit_changes", "Changes of a commit", "What one commit changed relative to its first parent: entity-level inserts, updates and deletes with before and after images, paged.",
			true, false, scopeEnums, func(ctx context.Context, b Backend, in commitChangesIn) (json.RawMessage, string, error) {
				q := in.scopeIn.values()
				set(q, "page_token", in.PageToken)
				setInt(q, "limit", in.Limit)
				raw, err := b.CommitChanges(ctx, in.Commit, q)
				return raw, decoded(raw, renderCommitChanges), err
			}),
		newBuiltin("diff", "Diff two branches or commits", "The entity-level changes that turn one branch head or commit into another, with before and after images.",
			true, false, nil, func(ctx context.Context, b Backend, in diffIn) (json.RawMessage, string, error) {
				raw, err := b.Diff(ctx, remote.DiffRequest{From: remote.DiffSide{Branch: in.FromBranch, Snapshot: in.FromSnapshot},
					To: remote.DiffSide{Branch: in.ToBranch, Snapshot: in.ToSnapshot}, Limit: in.Limit})
				return raw, decoded(raw, renderDiff), err
			}),
		newBuiltin("changes_poll", "Poll the change feed", "The next page of a branch's change feed: commits in order with their entity changes, and the cursor to resume from. Start with start=beginning or start=now, then pass the returned cursor.",
			true, false, scopeEnums, func(ctx context.Context, b Backend, in changesPollIn) (json.RawMessage, string, error) {
				q := in.scopeIn.values()
				set(q, "branch", in.Branch)
				set(q, "cursor", in.Cursor)
				set(q, "start", in.Start)
				set(q, "page_token", in.PageToken)
				setInt(q, "limit", in.Limit)
				setInt(q, "max_commits", in.MaxCommits)
				raw, err := b.PollChanges(ctx, q)
				return raw, decoded(raw, renderFeed), err
			}),
	}
}

func (s scopeIn) values() url.Values {
	q := url.Values{}
	for k, vs := range map[string][]string{"kind": s.Kind, "type": s.Type, "op": s.Op} {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	return q
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}

// decodeArgs decodes tool arguments into v, keeping numbers exact (a
// bigint parameter must not pass through float64).
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badInput("invalid arguments: %v", err)
	}
	return nil
}
