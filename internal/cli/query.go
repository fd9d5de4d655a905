package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/value"
	"github.com/spf13/cobra"
)

// sourceOptions are the flags shared by query and mutate: where the .gq
// source and the parameters come from.
type sourceOptions struct {
	queryFile  string
	queryStr   string
	params     string
	paramsFile string
}

func (s *sourceOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.queryFile, "query", "", "path of a .gq file holding the query (- reads standard input)")
	f.StringVarP(&s.queryStr, "query-string", "e", "", "the .gq query source itself")
	f.StringVar(&s.params, "params", "", `parameters as a JSON object, e.g. '{"name":"Alice"}'`)
	f.StringVar(&s.paramsFile, "params-file", "", "path of a JSON file holding the parameters (- reads standard input)")
	cmd.MarkFlagsMutuallyExclusive("query", "query-string")
	cmd.MarkFlagsMutuallyExclusive("params", "params-file")
}

// load returns the query source and the decoded parameters. A file named
// "-" is read from in (standard input); at most one flag may name it.
func (s *sourceOptions) load(cmd *cobra.Command, in io.Reader) (string, map[string]any, error) {
	if s.queryFile == "-" && s.paramsFile == "-" {
		return "", nil, usagef("--query - and --params-file - both want standard input: give one of them a file")
	}
	var src string
	switch {
	case s.queryFile != "":
		b, err := readInput(in, s.queryFile)
		if err != nil {
			return "", nil, fmt.Errorf("read query file: %w", err)
		}
		src = string(b)
	case cmd.Flags().Changed("query-string"):
		src = s.queryStr
	default:
		return "", nil, usagef("give the query with --query FILE (- for standard input) or -e SOURCE (stored queries by name need --server)")
	}
	if strings.TrimSpace(src) == "" {
		return "", nil, usagef("the query source must not be empty")
	}
	params, err := parseParams(in, s.params, s.paramsFile)
	if err != nil {
		return "", nil, err
	}
	return src, params, nil
}

// parseParams decodes --params (or the file of --params-file) as a JSON
// object; numbers stay json.Number so 64-bit integers are exact.
func parseParams(in io.Reader, inline, file string) (map[string]any, error) {
	raw := inline
	if file != "" {
		b, err := readInput(in, file)
		if err != nil {
			return nil, fmt.Errorf("read params file: %w", err)
		}
		raw = string(b)
	}
	params := map[string]any{}
	if raw != "" {
		if err := value.CheckJSONText([]byte(raw)); err != nil {
			return nil, usagef("invalid --params: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		if err := dec.Decode(&params); err != nil {
			return nil, usagef("invalid --params: %v (want a JSON object)", err)
		}
		if dec.More() {
			return nil, usagef("invalid --params: trailing data after the JSON object")
		}
	}
	return params, nil
}

// readInput reads a whole input file; "-" is in (standard input).
func readInput(in io.Reader, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(in)
	}
	return os.ReadFile(path)
}

type queryOptions struct {
	src      sourceOptions
	branch   string
	snapshot string
	format   string
	json     bool
	memory   string
	timeout  time.Duration
}

// Environment defaults of the query limits flags.
const (
	envQueryMemory  = "OMNIGRAPH_QUERY_MEMORY_LIMIT"
	envQueryTimeout = "OMNIGRAPH_QUERY_TIMEOUT"
)

// limits returns the query limits the flags (else the environment) set.
func (o *queryOptions) limits(cmd *cobra.Command, getenv func(string) string) (omnigraph.QueryLimits, error) {
	var l omnigraph.QueryLimits
	mem := o.memory
	if !cmd.Flags().Changed("memory-limit") {
		mem = getenv(envQueryMemory)
	}
	if mem != "" {
		n, err := limits.ParseBytes(mem)
		if err != nil {
			return l, usagef("--memory-limit: %v", err)
		}
		if n == 0 {
			return l, usagef("--memory-limit: 0 would refuse every query (use none for no limit)")
		}
		l.MemoryBytes = n
	}
	l.Timeout = o.timeout
	if !cmd.Flags().Changed("timeout") {
		if v := getenv(envQueryTimeout); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return l, usagef("%s=%q: want a duration like 30s or 500ms", envQueryTimeout, v)
			}
			l.Timeout = d
		}
	}
	if l.Timeout < 0 {
		return l, usagef("--timeout must not be negative")
	}
	return l, nil
}

func (a *app) newQueryCmd() *cobra.Command {
	var o queryOptions
	cmd := &cobra.Command{
		Use:     "query [NAME] (--query FILE.gq | -e SOURCE) [--params JSON]",
		Aliases: []string{"read"},
		Short:   "Run a read query",
		Long: `Run a read query from a .gq file (--query) or inline source (-e). NAME
selects one query of a multi-query file; it may be omitted when the source
holds exactly one query.

Reads see a branch head (--branch, default main) or an exact commit
(--snapshot COMMIT_ID). Output formats: table (default), kv, csv, jsonl,
json; --json is the same as --format json.

A query's working memory is bounded (--memory-limit, default 2GiB, or
$OMNIGRAPH_QUERY_MEMORY_LIMIT) and so, if set, is its time (--timeout or
$OMNIGRAPH_QUERY_TIMEOUT). A query over either bound stops with a
resource-limit error (exit 1) and returns nothing.

Rows are streamed: projected, encoded and written a batch at a time, so a
result larger than the memory limit is printed in every format. An error
while rows are written (the timeout passing) ends the output there, exit 1.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if cmd.CalledAs() == "read" {
				fmt.Fprintln(a.io.Err, "warning: `omnigraph read` is deprecated; use `omnigraph query`")
			}
			return a.runQuery(cmd, args, &o)
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	o.src.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.branch, "branch", "", "branch to read (default main)")
	f.StringVar(&o.snapshot, "snapshot", "", "commit id to read (time travel)")
	f.StringVar(&o.format, "format", "", "output format: table, kv, csv, jsonl or json")
	f.BoolVar(&o.json, "json", false, "same as --format json")
	f.StringVar(&o.memory, "memory-limit", "", "bound the query's working memory: a size like 512MiB or 4GB, or none (default 2GiB)")
	f.DurationVar(&o.timeout, "timeout", 0, "bound the query's wall time, e.g. 30s (default none)")
	cmd.MarkFlagsMutuallyExclusive("branch", "snapshot")
	cmd.MarkFlagsMutuallyExclusive("format", "json")
	return cmd
}

// openQuery opens the graph of a local query or mutate and returns the
// NAME argument ("": the source's only query).
func (a *app) openQuery(cmd *cobra.Command, args []string) (*omnigraph.Graph, string, error) {
	g, _, err := a.open(cmd, nil, "")
	if err != nil {
		return nil, "", err
	}
	if len(args) > 0 {
		return g, args[0], nil
	}
	return g, "", nil
}

func (a *app) runQuery(cmd *cobra.Command, args []string, o *queryOptions) error {
	// --format/--json, else the operator config's defaults.output, else
	// table (spec/surfaces.md §1.5).
	format, err := a.readFormat(cmd, "")
	if err != nil {
		return err
	}
	src, params, err := o.src.load(cmd, a.io.In)
	if err != nil {
		return err
	}
	ql, err := o.limits(cmd, os.Getenv)
	if err != nil {
		return err
	}
	g, name, err := a.openQuery(cmd, args)
	if err != nil {
		return err
	}
	t := omnigraph.Target{Branch: o.branch, Snapshot: o.snapshot}
	// The rows are projected, encoded and written in batches as the
	// output is written (omnigraph.ReadStream), never held whole.
	return g.QueryStream(omnigraph.WithQueryLimits(cmd.Context(), ql), t, src, name, params, func(st *omnigraph.ReadStream) error {
		return a.writeRead(format, t, streamedRead(st))
	})
}

type mutateOptions struct {
	src      sourceOptions
	branch   string
	ifCommit string
	json     bool
}

func (a *app) newMutateCmd() *cobra.Command {
	var o mutateOptions
	cmd := &cobra.Command{
		Use:     "mutate [NAME] (--query FILE.gq | -e SOURCE) [--params JSON]",
		Aliases: []string{"change"},
		Short:   "Run a mutation (insert, update, delete) as one atomic commit",
		Long: `Run a mutation query. All its statements apply atomically as one commit on
the branch (--branch, default main); a mutation that changes nothing makes no
commit.

--if-commit COMMIT_ID makes the write conditional: if the branch head is no
longer that commit, nothing is written and the command exits with status 4.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if cmd.CalledAs() == "change" {
				fmt.Fprintln(a.io.Err, "warning: `omnigraph change` is deprecated; use `omnigraph mutate`")
			}
			return a.runMutate(cmd, args, &o)
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet")
	o.src.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.branch, "branch", "main", "branch to write")
	f.StringVar(&o.ifCommit, "if-commit", "", "only write if the branch head is this commit")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) runMutate(cmd *cobra.Command, args []string, o *mutateOptions) error {
	src, params, err := o.src.load(cmd, a.io.In)
	if err != nil {
		return err
	}
	g, name, err := a.openQuery(cmd, args)
	if err != nil {
		return err
	}
	res, qname, err := g.Mutate(cmd.Context(), o.branch, src, name, params, omnigraph.MutateOptions{Actor: a.g.as, IfCommit: o.ifCommit})
	var pf *omnigraph.PreconditionFailedError
	if errors.As(err, &pf) {
		if o.json {
			type failure struct {
				Expected string `json:"expected"`
				Actual   string `json:"actual"`
			}
			_ = a.printJSON(struct {
				PreconditionFailure failure `json:"precondition_failure"`
			}{failure{pf.Expected, pf.Actual}})
			return &SilentError{Err: err}
		}
		return err
	}
	if err != nil {
		return a.reportConflict(err, o.json)
	}
	if o.json {
		out := struct {
			Branch        string      `json:"branch"`
			QueryName     string      `json:"query_name"`
			AffectedNodes int64       `json:"affected_nodes"`
			AffectedEdges int64       `json:"affected_edges"`
			ActorID       *string     `json:"actor_id"`
			Commit        *commitJSON `json:"commit"`
			Warnings      []string    `json:"warnings,omitempty"`
		}{o.branch, qname, res.AffectedNodes, res.AffectedEdges, strPtr(a.g.as), toCommitJSON(res.Commit), res.Warnings}
		return a.printJSON(out)
	}
	a.printChange(qname, o.branch, res.AffectedNodes, res.AffectedEdges, res.Commit, res.Warnings)
	return nil
}
