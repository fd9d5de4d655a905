package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/spf13/cobra"
)

type lintOptions struct {
	queryPath  string
	schemaPath string
	json       bool
}

func (a *app) newLintCmd() *cobra.Command {
	var o lintOptions
	cmd := &cobra.Command{
		Use:   "lint (--schema FILE.pg | URI) --query FILE.gq",
		Short: "Check a .gq query file against a schema without running it",
		Long: `Parse and type-check every query in a .gq file against a schema.

With --schema the check is offline: no graph is opened. Without it, the
query file is checked against the schema of the graph at URI (or --store),
which is only read. Each query gets a
status; findings report schema properties no update query sets and
mutations without parameters. The exit status is 1 when any query has an
error (the report is printed first), 0 otherwise.

Also available as 'omnigraph check', 'omnigraph query lint' and
'omnigraph query check'.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runLint(cmd, args, &o)
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	cmd.Flags().StringVar(&o.queryPath, "query", "", "path of the .gq file to check (required)")
	cmd.Flags().StringVar(&o.schemaPath, "schema", "", "path of the .pg schema to check against")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	_ = cmd.MarkFlagRequired("query")
	return cmd
}

func (a *app) runLint(cmd *cobra.Command, args []string, o *lintOptions) error {
	var schemaName, schemaSrc string
	if o.schemaPath != "" {
		if len(args) > 0 || a.g.store != "" {
			return usagef("lint with --schema is offline: do not also give a graph URI")
		}
		b, err := os.ReadFile(o.schemaPath)
		if err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		schemaName, schemaSrc = o.schemaPath, string(b)
	} else {
		// Graph-backed: check against the schema the graph accepted.
		g, uri, err := a.open(cmd, args, "")
		if err != nil {
			return err
		}
		if schemaSrc, err = g.SchemaSource(cmd.Context(), omnigraph.Target{}); err != nil {
			return err
		}
		schemaName = uri
	}
	cat, err := schema.Compile(schemaName, schemaSrc)
	if err != nil {
		return err
	}
	querySrc, err := os.ReadFile(o.queryPath)
	if err != nil {
		return fmt.Errorf("read query file: %w", err)
	}
	rep := query.Lint(cat, schemaName, o.queryPath, string(querySrc))
	if o.json {
		enc := json.NewEncoder(a.io.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeLintHuman(a.io, rep)
	}
	if rep.Status == "error" {
		return &SilentError{Err: errReported}
	}
	return nil
}
