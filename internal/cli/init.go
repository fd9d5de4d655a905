package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

type initOptions struct {
	schemaPath string
	force      bool
	json       bool
}

func (a *app) newInitCmd() *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init --schema FILE.pg URI",
		Short: "Create a new graph from a schema",
		Long: `Create a graph at URI (a directory path or file:// URL) from a .pg schema
and publish its first commit on branch main.

init refuses an address that already holds a graph; it never overwrites data.
An init that was interrupted before it finished leaves no usable graph, and
running init again completes it (with or without --force). --force never
replaces an initialized graph.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			uri, err := a.graphURI(args, "")
			if err != nil {
				return err
			}
			src, err := os.ReadFile(o.schemaPath)
			if err != nil {
				return fmt.Errorf("read schema: %w", err)
			}
			a.echoTarget("init", uri)
			g, err := omnigraph.Init(cmd.Context(), uri, o.schemaPath, string(src), a.g.as, a.graphOptions())
			if errors.Is(err, omnigraph.ErrAlreadyInitialized) && o.force {
				return fmt.Errorf("force init refuses graph root %s: %w", uri, err)
			}
			if err != nil {
				return err
			}
			a.schemaWarnings(o.schemaPath, g.SchemaWarnings())
			log, err := g.Log(cmd.Context(), "main", 1)
			if err != nil {
				return err
			}
			var head *omnigraph.CommitInfo
			if len(log) > 0 {
				head = &log[0]
			}
			if o.json {
				return a.printJSON(map[string]any{"uri": uri, "branch": "main", "commit": toCommitJSON(head)})
			}
			fmt.Fprintf(a.io.Out, "initialized %s\n", uri)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet")
	cmd.Flags().StringVar(&o.schemaPath, "schema", "", "path of the .pg schema (required)")
	cmd.Flags().BoolVar(&o.force, "force", false, "complete an interrupted init (never replaces an initialized graph)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("schema")
	return cmd
}

// schemaWarnings prints the warnings of the schema read from path on
// standard error (init, schema plan and apply; lint reports them as
// findings). They come from the compile the command's engine call did, so
// the source is compiled once; the engine may have compiled it under
// another name, so the position names path, as the user gave it.
func (a *app) schemaWarnings(path string, ws []omnigraph.SchemaWarning) {
	for _, w := range ws {
		pos := w.Pos
		pos.Filename = path
		fmt.Fprintf(a.io.Err, "warning: %s: %s\n", pos, w.Msg)
	}
}
