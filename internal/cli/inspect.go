package cli

import (
	"bufio"
	"fmt"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

func (a *app) newSnapshotCmd() *cobra.Command {
	var branch, snapshot string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "snapshot [URI] [--branch B | --snapshot COMMIT]",
		Short: "Show the head commit of a branch (or a given commit) and the row count of every table",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, args, "")
			if err != nil {
				return err
			}
			tabs, head, err := g.Tables(cmd.Context(), omnigraph.Target{Branch: branch, Snapshot: snapshot})
			if err != nil {
				return err
			}
			type coverage struct {
				Property           string `json:"property"`
				Kind               string `json:"kind"`
				FragmentsIndexed   int    `json:"fragments_indexed"`
				FragmentsUnindexed int    `json:"fragments_unindexed"`
				RowsIndexed        int64  `json:"rows_indexed"`
			}
			type dataset struct {
				EntityKind  string     `json:"entity_kind"`
				TypeName    string     `json:"type_name"`
				EntityCount int64      `json:"entity_count"`
				Fragments   int        `json:"fragments"`
				Indexes     []coverage `json:"search_indexes,omitempty"`
			}
			ds := make([]dataset, len(tabs))
			for i, t := range tabs {
				ds[i] = dataset{EntityKind: t.Kind, TypeName: t.Name, EntityCount: t.Rows, Fragments: t.Fragments}
				for _, c := range t.Indexes {
					ds[i].Indexes = append(ds[i].Indexes, coverage{c.Property, c.Kind, c.FragmentsIndexed, c.FragmentsUnindexed, c.RowsIndexed})
				}
			}
			if asJSON {
				return a.printJSON(struct {
					GraphBranch           string    `json:"graph_branch"`
					GraphCommitID         string    `json:"graph_commit_id"`
					GraphManifestVersion  int64     `json:"graph_manifest_version"`
					InternalSchemaVersion int       `json:"internal_schema_version"`
					Datasets              []dataset `json:"datasets"`
				}{head.Branch, head.ID, head.ManifestVersion, omnigraph.FormatVersion, ds})
			}
			fmt.Fprintf(a.io.Out, "graph_branch: %s\n", head.Branch)
			fmt.Fprintf(a.io.Out, "graph_commit_id: %s\n", head.ID)
			fmt.Fprintf(a.io.Out, "graph_manifest_version: %d\n", head.ManifestVersion)
			fmt.Fprintf(a.io.Out, "internal_schema_version: %d\n", omnigraph.FormatVersion)
			for _, d := range ds {
				fmt.Fprintf(a.io.Out, "%s:%s  %d entities\n", d.EntityKind, d.TypeName, d.EntityCount)
			}
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	cmd.Flags().StringVar(&branch, "branch", "", "branch to inspect (default main)")
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "commit id to inspect (time travel)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.MarkFlagsMutuallyExclusive("branch", "snapshot")
	return cmd
}

func (a *app) newExportCmd() *cobra.Command {
	var branch, snapshot string
	var types []string
	var jsonl bool
	cmd := &cobra.Command{
		Use:   "export [URI]",
		Short: "Write the graph as NDJSON that load accepts",
		Long: `Write every node and edge of a branch (or, with --snapshot, of one commit)
to stdout in the graph-batch NDJSON format, so that
'omnigraph load --mode overwrite' of the output reproduces the graph.
--type limits the output to some node or edge types (repeatable).`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, args, "")
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(a.io.Out, 1<<16)
			if err := g.Export(cmd.Context(), omnigraph.Target{Branch: branch, Snapshot: snapshot}, types, w); err != nil {
				return err
			}
			return w.Flush()
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	f := cmd.Flags()
	f.StringVar(&branch, "branch", "", "branch to export (default main)")
	f.StringVar(&snapshot, "snapshot", "", "commit id to export")
	f.StringArrayVar(&types, "type", nil, "export only this node or edge type (repeatable)")
	f.BoolVar(&jsonl, "jsonl", true, "NDJSON output (the only format; kept for old scripts)")
	_ = f.MarkHidden("jsonl")
	cmd.MarkFlagsMutuallyExclusive("branch", "snapshot")
	return cmd
}

func (a *app) newCommitCmd() *cobra.Command {
	cmd := groupCmd("commit", "Inspect the commit history", "")
	var branch, uriFlag string
	var asJSON bool
	var limit int
	list := &cobra.Command{
		Use:   "list [URI]",
		Short: "List the commits of a branch, newest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, args, uriFlag)
			if err != nil {
				return err
			}
			log, err := g.Log(cmd.Context(), branch, limit)
			if err != nil {
				return err
			}
			if asJSON {
				out := struct {
					Commits []*commitJSON `json:"commits"`
				}{Commits: []*commitJSON{}}
				for i := range log {
					out.Commits = append(out.Commits, toCommitJSON(&log[i]))
				}
				return a.printJSON(out)
			}
			for _, c := range log {
				a.printCommitLine(c)
			}
			return nil
		}),
	}
	acceptGlobals(list, "store", "quiet")
	list.Flags().StringVar(&branch, "branch", "main", "branch whose history to list")
	list.Flags().StringVar(&uriFlag, "uri", "", "graph URI")
	list.Flags().IntVar(&limit, "limit", 0, "list at most this many commits (0 = all)")
	list.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")

	var showURI string
	var showJSON bool
	show := &cobra.Command{
		Use:   "show COMMIT_ID",
		Short: "Show one commit",
		Args:  cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, nil, showURI)
			if err != nil {
				return err
			}
			c, err := g.Commit(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if showJSON {
				return a.printJSON(toCommitJSON(&c))
			}
			a.printCommitLine(c)
			return nil
		}),
	}
	acceptGlobals(show, "store", "quiet")
	show.Flags().StringVar(&showURI, "uri", "", "graph URI")
	show.Flags().BoolVar(&showJSON, "json", false, "print the result as JSON")
	cmd.AddCommand(list, show, a.newCommitChangesCmd())
	return cmd
}

func (a *app) printCommitLine(c omnigraph.CommitInfo) {
	actor := c.Actor
	if actor == "" {
		actor = "-"
	}
	parent := c.Parent
	if parent == "" {
		parent = "-"
	}
	kind := c.Kind
	if kind == "" {
		kind = "-"
	}
	merge := ""
	if c.MergedParent != "" {
		merge = "  merged=" + c.MergedParent
	}
	fmt.Fprintf(a.io.Out, "%s  v%d  %s  %-11s  actor=%s  parent=%s%s\n", c.ID, c.ManifestVersion,
		c.CreatedAt.UTC().Format(time.RFC3339), kind, actor, parent, merge)
}

func (a *app) newSchemaCmd() *cobra.Command {
	cmd := groupCmd("schema", "Inspect and evolve the graph's schema", "")
	var asJSON bool
	var branch string
	show := &cobra.Command{
		Use:     "show [URI]",
		Aliases: []string{"get"},
		Short:   "Print the accepted .pg schema source",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, args, "")
			if err != nil {
				return err
			}
			src, err := g.SchemaSource(cmd.Context(), omnigraph.Target{Branch: branch})
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(map[string]string{"schema_source": src})
			}
			_, err = fmt.Fprint(a.io.Out, src)
			return err
		}),
	}
	acceptGlobals(show, "store", "quiet")
	show.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	show.Flags().StringVar(&branch, "branch", "main", "branch whose schema to show")
	cmd.AddCommand(show, a.newSchemaPlanCmd(), a.newSchemaApplyCmd())
	return cmd
}
