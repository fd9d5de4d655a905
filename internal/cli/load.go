package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

type loadOptions struct {
	data   string
	mode   string
	branch string
	from   string
	json   bool
}

func (a *app) newLoadCmd() *cobra.Command {
	var o loadOptions
	cmd := a.loadCmd(&o)
	_ = cmd.MarkFlagRequired("mode")
	return cmd
}

// newIngestCmd is the reference CLI's deprecated spelling of load
// (spec/surfaces.md §1.3): hidden, --mode defaults to merge and --from to
// main, and one warning line on standard error.
func (a *app) newIngestCmd() *cobra.Command {
	var o loadOptions
	cmd := a.loadCmd(&o)
	cmd.Use = "ingest [URI] --data FILE.jsonl [--mode merge] [--branch B]"
	cmd.Short = "Deprecated spelling of load (--mode merge, --from main by default)"
	cmd.Hidden = true
	_ = cmd.Flags().Set("mode", "merge")
	_ = cmd.Flags().Set("from", "main")
	cmd.Flags().Lookup("mode").DefValue = "merge"
	cmd.Flags().Lookup("from").DefValue = "main"
	for _, name := range []string{"mode", "from"} {
		cmd.Flags().Lookup(name).Changed = false
	}
	cmd.PreRun = func(cmd *cobra.Command, args []string) {
		fmt.Fprintln(a.io.Err, "warning: `omnigraph ingest` is deprecated; use `omnigraph load --mode merge`")
	}
	return cmd
}

// loadCmd builds the load command into o; the caller marks what is
// required.
func (a *app) loadCmd(o *loadOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "load [URI] --data FILE.jsonl --mode append|merge|overwrite",
		Short: "Load graph-batch NDJSON as one atomic commit",
		Long: `Load a graph-batch NDJSON file: one JSON object per line,
{"type":"Person","data":{...}} for nodes and
{"edge":"Knows","from":"<id>","to":"<id>","data":{...}} for edges.

The whole file is validated (types, keys, uniqueness, ranges, checks,
cardinality, edge endpoints) before anything is written, and publishes as a
single commit; any error changes nothing and names the line.

Modes (required):
  append     strict insert: an id that already exists is a key conflict
  merge      upsert by id: existing entities are replaced, new ones inserted
  overwrite  replace every type present in the file; other types are kept`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runLoad(cmd, args, o)
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet", "yes")
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "path of the NDJSON file to load, - for standard input (required)")
	f.StringVar(&o.mode, "mode", "", "append, merge or overwrite (required)")
	f.StringVar(&o.branch, "branch", "main", "branch to load into (must exist unless --from is given)")
	f.StringVar(&o.from, "from", "", "create --branch from this branch or commit first if it does not exist")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

func (a *app) runLoad(cmd *cobra.Command, args []string, o *loadOptions) error {
	mode := omnigraph.LoadMode(o.mode)
	switch mode {
	case omnigraph.Append, omnigraph.Merge, omnigraph.Overwrite:
	default:
		return usagef("invalid --mode %q: use append, merge or overwrite", o.mode)
	}
	uri, err := a.graphURI(args, "")
	if err != nil {
		return err
	}
	if mode == omnigraph.Overwrite {
		if err := a.consent(uri, "load --mode overwrite", o.json); err != nil {
			return err
		}
	}
	var fh io.Reader = a.io.In
	size := int64(-1) // input bytes, when known (a regular file)
	if o.data != "-" {
		f, err := os.Open(o.data)
		if err != nil {
			return fmt.Errorf("open data file: %w", err)
		}
		defer f.Close()
		fh = f
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	g, err := a.openGraph(cmd.Context(), uri)
	if err != nil {
		return err
	}
	a.echoTarget(cmd.Name(), uri)
	var progress func(int64)
	stopBar := func() {}
	if a.io.StderrTTY && !o.json {
		// A file of known size shows bytes read against its size (a
		// percentage and an ETA); standard input shows records loaded.
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(a.io.Err),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionThrottle(200 * time.Millisecond),
			progressbar.OptionClearOnFinish(),
		}
		if size >= 0 {
			opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))
			bar := progressbar.NewOptions64(size, opts...)
			// Counted as the loader consumes them (after the read-ahead
			// buffer), so the rate is the load's, not the disk's.
			fh = &countingReader{r: bufio.NewReaderSize(fh, 1<<20), add: func(n int) { _ = bar.Add(n) }}
			stopBar = func() { _ = bar.Finish() }
		} else {
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionSetItsString("records"))
			bar := progressbar.NewOptions64(-1, opts...)
			progress = func(n int64) { _ = bar.Set64(n) }
			stopBar = func() { _ = bar.Finish() }
		}
	}
	res, err := g.Load(cmd.Context(), bufio.NewReaderSize(fh, 1<<20), omnigraph.LoadOptions{
		Branch: o.branch, From: o.from, Mode: mode, Actor: a.g.as, Progress: progress,
	})
	// The bar is cleared before anything else is printed.
	stopBar()
	if err != nil {
		return a.reportConflict(err, o.json)
	}
	nodes, edges := server.LoadCounts(res.Nodes), server.LoadCounts(res.Edges)
	if o.json {
		out := struct {
			URI           string                               `json:"uri"`
			Branch        string                               `json:"branch"`
			Mode          string                               `json:"mode"`
			BaseBranch    *string                              `json:"base_branch,omitempty"`
			BranchCreated bool                                 `json:"branch_created"`
			Nodes         []server.GraphBatchDeclarationOutput `json:"nodes"`
			Edges         []server.GraphBatchDeclarationOutput `json:"edges"`
			TotalEntities int64                                `json:"total_entities"`
			Embedded      int64                                `json:"embedded_vectors,omitempty"`
			ActorID       *string                              `json:"actor_id"`
			Commit        *commitJSON                          `json:"commit"`
			Warnings      []string                             `json:"warnings,omitempty"`
		}{uri, res.Branch, string(res.Mode), strPtr(res.BaseBranch), res.BranchCreated, nodes, edges, res.Total, res.Embedded, strPtr(a.g.as), toCommitJSON(res.Commit), res.Warnings}
		return a.printJSON(out)
	}
	a.printLoad(uri, res.Branch, string(res.Mode), res.Total, len(nodes), len(edges), res.Warnings)
	return nil
}

// countingReader reports the bytes read through it (the load progress bar
// of a file of known size).
type countingReader struct {
	r   io.Reader
	add func(int)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.add(n)
	}
	return n, err
}
