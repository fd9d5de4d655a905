package cli

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/spf13/cobra"
)

type changesOptions struct {
	uri       string
	limit     int
	pageToken string
	scopeOptions
	json bool
}

// scopeOptions are the --kind, --type and --op filters of commit changes,
// diff and the change feed.
type scopeOptions struct {
	kinds []string
	types []string
	ops   []string
}

// register adds the filter flags; typeHelp describes --type.
func (o *scopeOptions) register(cmd *cobra.Command, typeHelp string) {
	f := cmd.Flags()
	f.StringArrayVar(&o.kinds, "kind", nil, "only this entity kind: node or edge (repeatable)")
	f.StringArrayVar(&o.types, "type", nil, typeHelp)
	f.StringArrayVar(&o.ops, "op", nil, "only this operation: insert, update or delete (repeatable)")
}

func (a *app) newCommitChangesCmd() *cobra.Command {
	var o changesOptions
	cmd := &cobra.Command{
		Use:   "changes COMMIT_ID",
		Short: "List the entities a commit inserted, updated or deleted",
		Long: `List what one commit changed relative to its first parent: every node and
edge inserted, updated or deleted, with before and after images.

The text output is one line a change: an insert with its non-null
properties, an update with each property it changed (age 25 → 99), a
delete with the id; edges are named by their endpoints (Ada -> Grace), not
by their generated ids. --json prints the before and after images.

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
	f.IntVar(&o.limit, "limit", omnigraph.DefaultPageChanges, "changes per page")
	f.StringVar(&o.pageToken, "page-token", "", "continue from this page token")
	o.register(cmd, "only this type (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

type changeJSON struct {
	Kind       string `json:"kind"`
	EntityType struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"entity_type"`
	ID     string                    `json:"id"`
	Op     string                    `json:"op"`
	Before *server.ChangeImageOutput `json:"before,omitempty"`
	After  *server.ChangeImageOutput `json:"after,omitempty"`
}

func toChangeJSON(c omnigraph.Change) changeJSON {
	var out changeJSON
	out.Kind, out.ID, out.Op = c.Kind, c.ID, c.Op
	out.EntityType.ID = c.TypeKey()
	out.EntityType.Name = c.Type
	out.Before, out.After = server.ChangeImages(c)
	return out
}

func (o *changesOptions) scope() omnigraph.ChangeScope {
	return omnigraph.ChangeScope{Kinds: o.kinds, Types: o.types, Ops: o.ops}
}

func (o *changesOptions) check() error {
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
	return nil
}

// causeJSON is the cause of a block (spec/surfaces.md §2.4).
type causeJSON struct {
	GraphCommitID        string  `json:"graph_commit_id"`
	ParentCommitID       *string `json:"parent_commit_id"`
	MergedParentCommitID *string `json:"merged_parent_commit_id"`
	AuthoredBranch       *string `json:"authored_branch"`
	ActorID              *string `json:"actor_id"`
	AuthoredAt           int64   `json:"authored_at"`
}

func toCauseJSON(c omnigraph.ChangeCause) causeJSON {
	return causeJSON{GraphCommitID: c.Commit, ParentCommitID: strPtr(c.Parent), MergedParentCommitID: strPtr(c.MergedParent),
		AuthoredBranch: strPtr(c.AuthoredBranch), ActorID: strPtr(c.Actor), AuthoredAt: c.AuthoredAt}
}

func toChangesJSON(chs []omnigraph.Change) []changeJSON {
	out := make([]changeJSON, len(chs))
	for i, ch := range chs {
		out[i] = toChangeJSON(ch)
	}
	return out
}

// runCommitChanges prints one page (with --page-token, even an empty one:
// the first page) or every page.
func (a *app) runCommitChanges(cmd *cobra.Command, id string, o *changesOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	g, _, err := a.open(cmd, nil, o.uri)
	if err != nil {
		return err
	}
	one := cmd.Flags().Changed("page-token")
	tok := o.pageToken
	var all []omnigraph.Change
	var cause omnigraph.ChangeCause
	next := ""
	for {
		page, err := g.CommitChangesPage(cmd.Context(), id, o.scope(), tok, o.limit, 0)
		if err != nil {
			return err
		}
		cause = page.Cause
		all = append(all, page.Changes...)
		next = page.NextPageToken
		if one || next == "" {
			break
		}
		tok = next
	}
	if !one {
		next = ""
	}
	if o.json {
		out := struct {
			Cause         causeJSON    `json:"cause"`
			Changes       []changeJSON `json:"changes"`
			NextPageToken *string      `json:"next_page_token,omitempty"`
		}{Cause: toCauseJSON(cause), Changes: toChangesJSON(all), NextPageToken: strPtr(next)}
		return a.printJSON(out)
	}
	writeChanges(a.io.Out, all)
	if len(all) == 0 {
		fmt.Fprintln(a.io.Out, "(no changes)")
	}
	if next != "" {
		fmt.Fprintf(a.io.Out, "next page: --page-token %s\n", next)
	}
	return nil
}
