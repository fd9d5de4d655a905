package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/omnigraph-go/omnigraph"
)

type schemaChangeOptions struct {
	schemaPath    string
	branch        string
	json          bool
	allowDataLoss bool
}

func (o *schemaChangeOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.schemaPath, "schema", "", "path of the desired .pg schema (required)")
	f.StringVar(&o.branch, "branch", "main", "branch whose schema to evolve")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	f.BoolVar(&o.allowDataLoss, "allow-data-loss", false, "drop removed types and properties hard (data removed from the current state) instead of soft")
	_ = cmd.MarkFlagRequired("schema")
}

// newSchemaPlanCmd and newSchemaApplyCmd are the schema-evolution verbs
// (spec/surfaces.md §1.3, docs/schema-evolution.md).
func (a *app) newSchemaPlanCmd() *cobra.Command {
	var o schemaChangeOptions
	cmd := &cobra.Command{
		Use:   "plan [URI] --schema PATH",
		Short: "Show the steps that would evolve the graph to a desired schema",
		Long: `Resolve the desired .pg against the accepted schema of a branch and print
the steps applying it would take, without changing anything. Types and
properties match by name, or by @rename_from("Old"). A plan holding an
unsupported change is printed with supported: false.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			src, g, _, err := a.openForSchema(cmd, args, &o)
			if err != nil {
				return err
			}
			p, err := g.PlanSchema(cmd.Context(), string(src), omnigraph.SchemaApplyOptions{Branch: o.branch, AllowDataLoss: o.allowDataLoss})
			if err != nil {
				return err
			}
			a.schemaWarnings(o.schemaPath, p.Warnings)
			if o.json {
				return a.printJSON(p)
			}
			printPlanSteps(a, p.Steps)
			if len(p.Steps) == 0 {
				fmt.Fprintln(a.io.Out, "schema is up to date: no changes")
			} else if !p.Supported {
				fmt.Fprintln(a.io.Out, "plan is not supported: schema apply would refuse it")
			}
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	o.flags(cmd)
	return cmd
}

// openForSchema reads --schema and opens the graph, for schema plan and
// apply (which print the schema's warnings from their plan).
func (a *app) openForSchema(cmd *cobra.Command, args []string, o *schemaChangeOptions) ([]byte, *omnigraph.Graph, string, error) {
	src, err := os.ReadFile(o.schemaPath)
	if err != nil {
		return nil, nil, "", err
	}
	g, uri, err := a.open(cmd, args, "")
	return src, g, uri, err
}

func printPlanSteps(a *app, steps []omnigraph.SchemaStep) {
	for _, s := range steps {
		fmt.Fprintln(a.io.Out, s.String())
	}
}

func (a *app) newSchemaApplyCmd() *cobra.Command {
	var o schemaChangeOptions
	cmd := &cobra.Command{
		Use:   "apply [URI] --schema PATH",
		Short: "Evolve the graph's schema, with its data, in one commit",
		Long: `Apply the desired .pg to a branch as one atomic commit: after a crash the
graph has exactly the old or the new schema. Other branches keep theirs.
Drops are soft by default (data kept for time travel); --allow-data-loss
makes them hard. Unsupported changes, and added constraints the stored data
breaks, are refused before anything is written.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			src, g, uri, err := a.openForSchema(cmd, args, &o)
			if err != nil {
				return err
			}
			actor, err := a.actor()
			if err != nil {
				return err
			}
			a.echoTarget("schema apply", uri)
			res, err := g.ApplySchema(cmd.Context(), string(src), omnigraph.SchemaApplyOptions{Branch: o.branch, AllowDataLoss: o.allowDataLoss, Actor: actor})
			if err != nil {
				return err
			}
			a.schemaWarnings(o.schemaPath, res.Plan.Warnings)
			if o.json {
				out := schemaApplyJSON{URI: uri, Supported: res.Plan.Supported, Applied: res.Applied,
					StepCount: len(res.Plan.Steps), Steps: res.Plan.Steps}
				if res.Commit != nil {
					out.GraphManifestVersion = res.Commit.ManifestVersion
					out.Commit = toCommitJSON(res.Commit)
				} else if c, err := g.Log(cmd.Context(), o.branch, 1); err == nil && len(c) > 0 {
					out.GraphManifestVersion = c[0].ManifestVersion
				}
				return a.printJSON(out)
			}
			printPlanSteps(a, res.Plan.Steps)
			if !res.Applied {
				fmt.Fprintf(a.io.Out, "schema of %s on branch %s is up to date: nothing applied\n", uri, o.branch)
				return nil
			}
			fmt.Fprintf(a.io.Out, "applied %d schema steps to %s on branch %s (commit %s)\n", len(res.Plan.Steps), uri, o.branch, res.Commit.ID)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet", "as")
	o.flags(cmd)
	return cmd
}

// schemaApplyJSON is SchemaApplyOutput of spec/surfaces.md §2.4, plus the
// published commit.
type schemaApplyJSON struct {
	URI                  string                 `json:"uri"`
	Supported            bool                   `json:"supported"`
	Applied              bool                   `json:"applied"`
	StepCount            int                    `json:"step_count"`
	Steps                []omnigraph.SchemaStep `json:"steps"`
	GraphManifestVersion int64                  `json:"graph_manifest_version"`
	Commit               *commitJSON            `json:"commit"`
}
