package cli

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

type changesOptions struct {
	uri       string
	limit     int
	pageToken string
	kinds     []string
	types     []string
	ops       []string
	json      bool
}

func (a *app) newCommitChangesCmd() *cobra.Command {
	var o changesOptions
	cmd := &cobra.Command{
		Use:   "changes COMMIT_ID",
		Short: "List the entities a commit inserted, updated or deleted",
		Long: `List what one commit changed relative to its first parent: every node and
edge inserted, updated or deleted, with before and after images.

Changes are ordered nodes before edges, then by type, then by id. Without
--page-token every page is fetched and printed; with it, one page of at most
--limit changes is printed with the token of the next page, if any.
Filters (--kind node|edge, --type T, --op insert|update|delete) repeat.`,
		Args: cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runCommitChanges(cmd, args[0], &o)
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	f := cmd.Flags()
	f.StringVar(&o.uri, "uri", "", "graph URI")
	f.IntVar(&o.limit, "limit", 1000, "changes per page")
	f.StringVar(&o.pageToken, "page-token", "", "continue from this page token")
	f.StringArrayVar(&o.kinds, "kind", nil, "only this entity kind: node or edge (repeatable)")
	f.StringArrayVar(&o.types, "type", nil, "only this type (repeatable)")
	f.StringArrayVar(&o.ops, "op", nil, "only this operation: insert, update or delete (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

type changeImageJSON struct {
	Properties map[string]any       `json:"properties"`
	Endpoints  *changeEndpointsJSON `json:"endpoints,omitempty"`
}

type changeEndpointsJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type changeJSON struct {
	Kind       string `json:"kind"`
	EntityType struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"entity_type"`
	ID     string           `json:"id"`
	Op     string           `json:"op"`
	Before *changeImageJSON `json:"before,omitempty"`
	After  *changeImageJSON `json:"after,omitempty"`
}

func toChangeJSON(c omnigraph.Change) changeJSON {
	var out changeJSON
	out.Kind, out.ID, out.Op = c.Kind, c.ID, c.Op
	out.EntityType.ID = c.Kind + ":" + c.Type
	out.EntityType.Name = c.Type
	image := func(props map[string]any) *changeImageJSON {
		if props == nil {
			return nil
		}
		img := &changeImageJSON{Properties: props}
		if c.Kind == "edge" {
			img.Endpoints = &changeEndpointsJSON{From: c.Src, To: c.Dst}
		}
		return img
	}
	out.Before, out.After = image(c.Before), image(c.After)
	return out
}

// pageToken binds a position to one commit so a token cannot be replayed
// against another.
func encodePageToken(commitID string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(commitID + ":" + strconv.Itoa(offset)))
}

func decodePageToken(tok, commitID string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, fmt.Errorf("change cursor rejected: malformed page token")
	}
	id, off, ok := strings.Cut(string(b), ":")
	if !ok {
		return 0, fmt.Errorf("change cursor rejected: malformed page token")
	}
	if id != commitID {
		return 0, fmt.Errorf("change cursor rejected: the page token belongs to commit %s", id)
	}
	n, err := strconv.Atoi(off)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("change cursor rejected: malformed page token")
	}
	return n, nil
}

func (a *app) runCommitChanges(cmd *cobra.Command, id string, o *changesOptions) error {
	if o.limit <= 0 {
		return usagef("--limit must be positive")
	}
	for _, k := range o.kinds {
		if k != "node" && k != "edge" {
			return usagef("invalid --kind %q: use node or edge", k)
		}
	}
	for _, op := range o.ops {
		if op != "insert" && op != "update" && op != "delete" {
			return usagef("invalid --op %q: use insert, update or delete", op)
		}
	}
	g, _, err := a.open(cmd, nil, o.uri)
	if err != nil {
		return err
	}
	c, err := g.Commit(cmd.Context(), id)
	if err != nil {
		return err
	}
	all, err := g.CommitChanges(cmd.Context(), id)
	if err != nil {
		return err
	}
	var changes []omnigraph.Change
	for _, ch := range all {
		if (len(o.kinds) == 0 || slices.Contains(o.kinds, ch.Kind)) &&
			(len(o.types) == 0 || slices.Contains(o.types, ch.Type)) &&
			(len(o.ops) == 0 || slices.Contains(o.ops, ch.Op)) {
			changes = append(changes, ch)
		}
	}
	start, end, next := 0, len(changes), ""
	if o.pageToken != "" {
		if start, err = decodePageToken(o.pageToken, c.ID); err != nil {
			return err
		}
		start = min(start, len(changes))
		end = min(start+o.limit, len(changes))
		if end < len(changes) {
			next = encodePageToken(c.ID, end)
		}
	}
	page := changes[start:end]
	if o.json {
		out := struct {
			Cause struct {
				GraphCommitID        string  `json:"graph_commit_id"`
				ParentCommitID       *string `json:"parent_commit_id"`
				MergedParentCommitID *string `json:"merged_parent_commit_id"`
				AuthoredBranch       *string `json:"authored_branch"`
				ActorID              *string `json:"actor_id"`
				AuthoredAt           int64   `json:"authored_at"`
			} `json:"cause"`
			Changes       []changeJSON `json:"changes"`
			NextPageToken *string      `json:"next_page_token,omitempty"`
		}{}
		out.Cause.GraphCommitID = c.ID
		out.Cause.ParentCommitID = strPtr(c.Parent)
		out.Cause.MergedParentCommitID = strPtr(c.MergedParent)
		out.Cause.ActorID = strPtr(c.Actor)
		out.Cause.AuthoredAt = c.CreatedAt.UnixMicro()
		out.Changes = make([]changeJSON, len(page))
		for i, ch := range page {
			out.Changes[i] = toChangeJSON(ch)
		}
		out.NextPageToken = strPtr(next)
		return a.printJSON(out)
	}
	for _, ch := range page {
		fmt.Fprintf(a.io.Out, "%-6s %s:%s %s\n", ch.Op, ch.Kind, ch.Type, ch.ID)
	}
	if len(page) == 0 {
		fmt.Fprintln(a.io.Out, "(no changes)")
	}
	if next != "" {
		fmt.Fprintf(a.io.Out, "next page: --page-token %s\n", next)
	}
	return nil
}
