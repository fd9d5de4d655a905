package cli

import (
	"fmt"
	"os"

	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/spf13/cobra"
)

type embedOptions struct {
	seed, input, output, spec string
	clean, reembedAll         bool
	types, selects            []string
	json                      bool
}

func (a *app) newEmbedCmd() *cobra.Command {
	var o embedOptions
	cmd := &cobra.Command{
		Use:   "embed (--seed MANIFEST | --input X --output Y --spec SPEC.json)",
		Short: "Fill, recompute or strip embedding vectors in a JSONL seed file (offline)",
		Long: `Stream a graph-batch JSONL file to a new one, computing embedding vectors
for the records a spec names. It works on files, not on a graph.

The spec (JSON, or the "embeddings" section of a seed manifest) gives the
vector dimension and, per type, the target property and the source fields:
  {"dimension": 1536, "types": {"Doc": {"target": "embedding", "fields": ["title", "body"]}}}
The text of a record is "type: T" followed by one "field: value" line per
non-empty source field.

Modes: by default only records whose target is missing, null or [] are
embedded; --reembed-all recomputes every selected record; --clean removes
the target field. --type restricts processing to types, --select
Type:field=value (or field=value) to matching records, which are then
re-embedded even when they have a vector.

The provider comes from the environment (OMNIGRAPH_EMBED_PROVIDER,
OMNIGRAPH_EMBED_BASE_URL, OMNIGRAPH_EMBED_MODEL, OPENROUTER_API_KEY /
OPENAI_API_KEY, OMNIGRAPH_EMBEDDINGS_MOCK); see docs/search.md.`,
		Args: cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runEmbed(cmd, &o)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.seed, "seed", "", "seed manifest (YAML: sources.raw_seed, artifacts.embedded_seed, embeddings)")
	f.StringVar(&o.input, "input", "", "input JSONL (with --output and --spec)")
	f.StringVar(&o.output, "output", "", "output JSONL (overrides the manifest's artifacts.embedded_seed)")
	f.StringVar(&o.spec, "spec", "", "embedding spec JSON (with --input and --output)")
	f.BoolVar(&o.clean, "clean", false, "remove the target fields instead of embedding")
	f.BoolVar(&o.reembedAll, "reembed-all", false, "recompute the vectors of every selected record")
	f.StringArrayVar(&o.types, "type", nil, "process only records of this type (repeatable)")
	f.StringArrayVar(&o.selects, "select", nil, "process only records matching Type:field=value or field=value (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	return cmd
}

func (a *app) runEmbed(cmd *cobra.Command, o *embedOptions) error {
	if o.clean && o.reembedAll {
		return usagef("--clean and --reembed-all cannot be used together")
	}
	job := embed.Job{Mode: embed.FillMissing, Types: o.types}
	switch {
	case o.clean:
		job.Mode = embed.Clean
	case o.reembedAll:
		job.Mode = embed.ReembedAll
	}
	for _, s := range o.selects {
		sel, err := embed.ParseSelector(s)
		if err != nil {
			return &UsageError{Err: err}
		}
		job.Selectors = append(job.Selectors, sel)
	}
	switch {
	case o.seed != "":
		if o.input != "" || o.spec != "" {
			return usagef("--seed cannot be combined with --input or --spec")
		}
		in, out, spec, err := embed.LoadManifest(o.seed)
		if err != nil {
			return err
		}
		job.Input, job.Output, job.Spec = in, out, spec
		if o.output != "" {
			job.Output = o.output
		}
	case o.input != "" && o.output != "" && o.spec != "":
		spec, err := embed.LoadSpec(o.spec)
		if err != nil {
			return err
		}
		job.Input, job.Output, job.Spec = o.input, o.output, spec
	default:
		return usagef("give --seed MANIFEST, or all of --input, --output and --spec")
	}
	var c *embed.Client
	if job.Mode != embed.Clean {
		cfg, err := embed.FromEnv(os.Getenv)
		if err != nil {
			return err
		}
		if c, err = embed.New(cfg); err != nil {
			return err
		}
	}
	rep, err := embed.Run(cmd.Context(), c, job)
	if err != nil {
		return err
	}
	if o.json {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.io.Out, "%s: %d records, %d selected, %d embedded, %d cleaned (%s, dim %d%s) → %s\n",
		rep.Input, rep.Records, rep.SelectedRecords, rep.EmbeddedRecords, rep.CleanedRecords, rep.Mode, rep.Dimension,
		map[bool]string{true: ", model " + rep.Model, false: ""}[rep.Model != ""], rep.Output)
	return nil
}
