package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/remote"
	"github.com/spf13/cobra"
)

func flagString(cmd *cobra.Command, name string) string {
	s, _ := cmd.Flags().GetString(name)
	return s
}

func flagBool(cmd *cobra.Command, name string) bool {
	b, _ := cmd.Flags().GetBool(name)
	return b
}

// printRaw pretty-prints a server JSON document (the served --json output
// is the server's DTO, which is the CLI's shape).
func (a *app) printRaw(raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := a.io.Out.Write(buf.Bytes())
	return err
}

// servedOut ends a served command: err as it is, else the server's body as
// it is under --json, else text's rendering of it.
func (a *app) servedOut(cmd *cobra.Command, raw json.RawMessage, err error, text func() error) error {
	if err != nil {
		return err
	}
	if flagBool(cmd, "json") {
		return a.printRaw(raw)
	}
	return text()
}

func (a *app) echoServed(verb string, rc *remote.Client) {
	if !a.g.quiet {
		fmt.Fprintf(a.io.Err, "omnigraph %s → %s (served)\n", verb, rc.URL())
	}
}

// readFormat resolves --format/--json, then defaults.output, then fallback.
func (a *app) readFormat(cmd *cobra.Command, fallback string) (string, error) {
	format := flagString(cmd, "format")
	if flagBool(cmd, "json") {
		format = "json"
	}
	if format == "" {
		if cfg, err := a.operator(); err == nil {
			format = cfg.Defaults.Output
		}
	}
	if format == "" {
		format = fallback
	}
	if format == "" {
		format = "table"
	}
	switch format {
	case "table", "kv", "csv", "jsonl", "json":
		return format, nil
	}
	return "", usagef("invalid --format %q: use table, kv, csv, jsonl or json", format)
}

// toReadResult turns a ReadOutput into the result the renderers print.
func toReadResult(raw json.RawMessage) (*omnigraph.ReadResult, error) {
	var out remote.ReadOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the server's read output: %w", err)
	}
	cols := out.Columns
	if cols == nil && len(out.Rows) > 0 {
		var err error
		if cols, err = objectKeys(raw); err != nil {
			return nil, err
		}
	}
	res := &omnigraph.ReadResult{QueryName: out.QueryName, Columns: cols, Rows: make([][]any, len(out.Rows))}
	res.Commit.ID = out.GraphCommitID
	for i, row := range out.Rows {
		vals := make([]any, len(cols))
		for j, c := range cols {
			if v, ok := row[c]; ok {
				dec := json.NewDecoder(bytes.NewReader(v))
				dec.UseNumber()
				if err := dec.Decode(&vals[j]); err != nil {
					return nil, err
				}
			}
		}
		res.Rows[i] = vals
	}
	return res, nil
}

// objectKeys returns the keys of rows[0] of a ReadOutput in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	var doc struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Rows) == 0 {
		return nil, err
	}
	return jsonKeys(doc.Rows[0])
}

// jsonKeys returns the keys of a JSON object in document order.
func jsonKeys(raw []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// servedSource reads what a served query or mutate runs: the NAME
// argument and the source flags; stored says no source was given, so NAME
// is a stored query of the server (the catalog lane).
func servedSource(cmd *cobra.Command, args []string) (name string, src sourceOptions, stored bool) {
	if len(args) > 0 {
		name = args[0]
	}
	src = sourceOptions{queryFile: flagString(cmd, "query"), queryStr: flagString(cmd, "query-string"),
		params: flagString(cmd, "params"), paramsFile: flagString(cmd, "params-file")}
	return name, src, src.queryFile == "" && src.queryStr == ""
}

// storedParams checks that a stored query or mutation (what) is named and
// reads its parameters.
func (a *app) storedParams(name string, src sourceOptions, what string) (map[string]any, error) {
	if name == "" {
		return nil, usagef("give a stored %s NAME, or the query with --query FILE or -e SOURCE", what)
	}
	return parseParams(a.io.In, src.params, src.paramsFile)
}

func (a *app) servedQuery(cmd *cobra.Command, args []string, rc *remote.Client) error {
	format, err := a.readFormat(cmd, "")
	if err != nil {
		return err
	}
	name, src, stored := servedSource(cmd, args)
	branch, snapshot := flagString(cmd, "branch"), flagString(cmd, "snapshot")
	var raw json.RawMessage
	if stored {
		params, err := a.storedParams(name, src, "query")
		if err != nil {
			return err
		}
		no := false
		raw, err = rc.InvokeQuery(cmd.Context(), name, remote.InvokeRequest{Params: params, Branch: branch, Snapshot: snapshot, ExpectMutation: &no}, "")
		if err != nil {
			return err
		}
	} else {
		text, params, err := src.load(cmd, a.io.In)
		if err != nil {
			return err
		}
		out, err := rc.Query(cmd.Context(), remote.QueryRequest{Query: text, Name: name, Params: params, Branch: branch, Snapshot: snapshot})
		if err != nil {
			return err
		}
		if raw, err = json.Marshal(out); err != nil {
			return err
		}
	}
	res, err := toReadResult(raw)
	if err != nil {
		return err
	}
	return a.writeRead(format, omnigraph.Target{Branch: branch, Snapshot: snapshot}, heldRead(res))
}

func (a *app) servedMutate(cmd *cobra.Command, args []string, rc *remote.Client) error {
	name, src, stored := servedSource(cmd, args)
	branch, ifCommit, asJSON := flagString(cmd, "branch"), flagString(cmd, "if-commit"), flagBool(cmd, "json")
	var raw json.RawMessage
	var err error
	if stored {
		params, perr := a.storedParams(name, src, "mutation")
		if perr != nil {
			return perr
		}
		yes := true
		raw, err = rc.InvokeQuery(cmd.Context(), name, remote.InvokeRequest{Params: params, Branch: branch, ExpectMutation: &yes}, ifCommit)
	} else {
		text, params, lerr := src.load(cmd, a.io.In)
		if lerr != nil {
			return lerr
		}
		raw, err = rc.Mutate(cmd.Context(), remote.ChangeRequest{Query: text, Name: name, Params: params, Branch: branch}, ifCommit)
	}
	var re *remote.Error
	if errors.As(err, &re) && re.Status == http.StatusPreconditionFailed && asJSON && re.Body != nil && re.Body.PreconditionFailure != nil {
		_ = a.printJSON(struct {
			PreconditionFailure *remote.PreconditionFailure `json:"precondition_failure"`
		}{re.Body.PreconditionFailure})
		return &SilentError{Err: fmt.Errorf("%w: %v", omnigraph.ErrPreconditionFailed, err)}
	}
	if err != nil {
		return err
	}
	if asJSON {
		return a.printRaw(raw)
	}
	var out struct {
		QueryName     string `json:"query_name"`
		Branch        string `json:"branch"`
		AffectedNodes int64  `json:"affected_nodes"`
		AffectedEdges int64  `json:"affected_edges"`
		Commit        *struct {
			ID string `json:"graph_commit_id"`
		} `json:"commit"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("the server's change output: %w", err)
	}
	var commit *omnigraph.CommitInfo
	if out.Commit != nil {
		commit = &omnigraph.CommitInfo{ID: out.Commit.ID}
	}
	a.printChange(out.QueryName, out.Branch, out.AffectedNodes, out.AffectedEdges, commit, out.Warnings)
	return nil
}

// needConsent enforces spec/surfaces.md §1.8 for destructive writes against
// a server: --yes is required (there is no prompt in a non-interactive run).
func (a *app) needConsent(what string) error {
	if a.g.yes {
		return nil
	}
	return usagef("%s against a server is destructive: pass --yes to confirm", what)
}

// servedLoadOut is the server's GraphBatchLoadOutput; the CLI adds uri.
type servedLoadOut struct {
	Branch        string          `json:"branch"`
	Mode          string          `json:"mode"`
	BaseBranch    *string         `json:"base_branch,omitempty"`
	BranchCreated bool            `json:"branch_created"`
	Nodes         json.RawMessage `json:"nodes"`
	Edges         json.RawMessage `json:"edges"`
	TotalEntities int64           `json:"total_entities"`
	ActorID       *string         `json:"actor_id"`
	Commit        json.RawMessage `json:"commit"`
	Warnings      []string        `json:"warnings,omitempty"`
}

func (a *app) servedLoad(cmd *cobra.Command, args []string, rc *remote.Client) error {
	mode := flagString(cmd, "mode")
	switch omnigraph.LoadMode(mode) {
	case omnigraph.Append, omnigraph.Merge:
	case omnigraph.Overwrite:
		if err := a.needConsent("load --mode overwrite"); err != nil {
			return err
		}
	default:
		return usagef("invalid --mode %q: use append, merge or overwrite", mode)
	}
	fh, err := os.Open(flagString(cmd, "data"))
	if err != nil {
		return fmt.Errorf("open data file: %w", err)
	}
	defer fh.Close()
	a.echoServed("load", rc)
	raw, err := rc.LoadNDJSON(cmd.Context(), bufio.NewReaderSize(fh, 1<<20), flagString(cmd, "branch"), flagString(cmd, "from"), mode)
	if err != nil {
		return err
	}
	var out servedLoadOut
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("the server's load output: %w", err)
	}
	if flagBool(cmd, "json") {
		return a.printJSON(struct {
			URI string `json:"uri"`
			*servedLoadOut
		}{rc.URL(), &out})
	}
	var nodes, edges []json.RawMessage
	_ = json.Unmarshal(out.Nodes, &nodes)
	_ = json.Unmarshal(out.Edges, &edges)
	a.printLoad(rc.URL(), out.Branch, out.Mode, out.TotalEntities, len(nodes), len(edges), out.Warnings)
	return nil
}

func (a *app) servedExport(cmd *cobra.Command, _ []string, rc *remote.Client) error {
	if flagString(cmd, "snapshot") != "" {
		return usagef("export --snapshot is not available against a server (the export route reads a branch)")
	}
	types, _ := cmd.Flags().GetStringArray("type")
	return rc.Export(cmd.Context(), remote.ExportRequest{Branch: flagString(cmd, "branch"), TypeNames: types}, a.io.Out)
}

func (a *app) servedSnapshot(cmd *cobra.Command, _ []string, rc *remote.Client) error {
	if flagString(cmd, "snapshot") != "" {
		return usagef("snapshot --snapshot is not available against a server")
	}
	raw, err := rc.Snapshot(cmd.Context(), flagString(cmd, "branch"))
	return a.servedOut(cmd, raw, err, func() error {
		var out struct {
			Branch   string `json:"graph_branch"`
			Version  int64  `json:"graph_manifest_version"`
			Internal int64  `json:"internal_schema_version"`
			Datasets []struct {
				EntityKind  string `json:"entity_kind"`
				TypeName    string `json:"type_name"`
				EntityCount int64  `json:"entity_count"`
			} `json:"datasets"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return err
		}
		fmt.Fprintf(a.io.Out, "graph_branch: %s\ngraph_manifest_version: %d\ninternal_schema_version: %d\n", out.Branch, out.Version, out.Internal)
		for _, d := range out.Datasets {
			fmt.Fprintf(a.io.Out, "%s:%s  %d entities\n", d.EntityKind, d.TypeName, d.EntityCount)
		}
		return nil
	})
}

func (a *app) servedBranchCreate(cmd *cobra.Command, args []string, rc *remote.Client) error {
	a.echoServed("branch create", rc)
	from := flagString(cmd, "from")
	raw, err := rc.CreateBranch(cmd.Context(), args[0], from)
	return a.servedOut(cmd, raw, err, func() error {
		fmt.Fprintf(a.io.Out, "created branch %s from %s\n", args[0], from)
		return nil
	})
}

func (a *app) servedBranchList(cmd *cobra.Command, _ []string, rc *remote.Client) error {
	names, err := rc.Branches(cmd.Context())
	if err != nil {
		return err
	}
	sort.Strings(names)
	if flagBool(cmd, "json") {
		return a.printJSON(struct {
			Branches []string `json:"branches"`
		}{append([]string{}, names...)})
	}
	for _, n := range names {
		fmt.Fprintln(a.io.Out, n)
	}
	return nil
}

func (a *app) servedBranchDelete(cmd *cobra.Command, args []string, rc *remote.Client) error {
	if err := a.needConsent("branch delete"); err != nil {
		return err
	}
	a.echoServed("branch delete", rc)
	raw, err := rc.DeleteBranch(cmd.Context(), args[0])
	return a.servedOut(cmd, raw, err, func() error {
		fmt.Fprintf(a.io.Out, "deleted branch %s\n", args[0])
		return nil
	})
}

func (a *app) servedBranchMerge(cmd *cobra.Command, args []string, rc *remote.Client) error {
	a.echoServed("branch merge", rc)
	into := flagString(cmd, "into")
	raw, err := rc.Merge(cmd.Context(), remote.MergeRequest{Source: args[0], Target: into, DeleteBranch: flagBool(cmd, "delete-branch")})
	var re *remote.Error
	if errors.As(err, &re) && re.Body != nil && len(re.Body.MergeConflicts) > 0 {
		if flagBool(cmd, "json") {
			_ = a.printRaw(json.RawMessage(re.Raw))
			return &SilentError{Err: err}
		}
		var cs []struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(re.Body.MergeConflicts, &cs)
		msgs := make([]string, len(cs))
		for i, c := range cs {
			msgs[i] = c.Message
		}
		return a.reportMergeConflicts(args[0], into, msgs, err, true)
	}
	return a.servedOut(cmd, raw, err, func() error {
		var out struct {
			Outcome           string  `json:"outcome"`
			BranchDeleteError *string `json:"branch_delete_error"`
		}
		_ = json.Unmarshal(raw, &out)
		if out.BranchDeleteError != nil {
			fmt.Fprintf(a.io.Err, "warning: merged, but deleting branch %s failed: %s\n", args[0], *out.BranchDeleteError)
		}
		fmt.Fprintf(a.io.Out, "merge %s into %s: %s\n", args[0], into, out.Outcome)
		return nil
	})
}

func (a *app) servedCommitList(cmd *cobra.Command, _ []string, rc *remote.Client) error {
	raw, err := rc.Commits(cmd.Context(), flagString(cmd, "branch"))
	if err != nil {
		return err
	}
	var out struct {
		Commits []commitJSON `json:"commits"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	if limit, _ := cmd.Flags().GetInt("limit"); limit > 0 && len(out.Commits) > limit {
		var all struct {
			Commits []json.RawMessage `json:"commits"`
		}
		_ = json.Unmarshal(raw, &all)
		raw, _ = json.Marshal(struct {
			Commits []json.RawMessage `json:"commits"`
		}{all.Commits[:limit]})
		out.Commits = out.Commits[:limit]
	}
	if flagBool(cmd, "json") {
		return a.printRaw(raw)
	}
	for _, c := range out.Commits {
		a.printCommitLine(c.info())
	}
	return nil
}

func (a *app) servedCommitShow(cmd *cobra.Command, args []string, rc *remote.Client) error {
	raw, err := rc.Commit(cmd.Context(), args[0])
	return a.servedOut(cmd, raw, err, func() error {
		var c commitJSON
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		a.printCommitLine(c.info())
		return nil
	})
}

func (a *app) servedSchemaShow(cmd *cobra.Command, _ []string, rc *remote.Client) error {
	src, err := rc.Schema(cmd.Context())
	if err != nil {
		return err
	}
	if flagBool(cmd, "json") {
		return a.printJSON(map[string]string{"schema_source": src})
	}
	_, err = fmt.Fprint(a.io.Out, src)
	return err
}

// servedOnly resolves a served scope for commands that exist only served.
func (a *app) servedOnly(cmd *cobra.Command) (*remote.Client, error) {
	rc, err := a.servedScope(cmd, nil)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, usagef("%s needs a server: give --server NAME|URL --graph ID or a profile with a server", cmd.CommandPath())
	}
	return rc, nil
}

func (a *app) newQueriesCmd() *cobra.Command {
	cmd := groupCmd("queries", "List stored queries (of a server's graph, or applied in a --cluster)", "")
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the stored queries of a graph (GET /graphs/{id}/queries)",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			if a.g.cluster != "" {
				if a.g.server != "" || a.g.profile != "" {
					return usagef("--cluster cannot be combined with --server or --profile")
				}
				out, broken, err := a.clusterQueries(cmd)
				if err != nil {
					return err
				}
				for _, ps := range broken {
					for _, p := range ps {
						fmt.Fprintln(a.io.Err, "warning: "+p)
					}
				}
				return a.printClusterQueries(out, asJSON)
			}
			rc, err := a.servedOnly(cmd)
			if err != nil {
				return err
			}
			raw, err := rc.Queries(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printRaw(raw)
			}
			var out struct {
				Queries []storedQueryJSON `json:"queries"`
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				return err
			}
			for _, q := range out.Queries {
				line := q.signature()
				if q.Description != nil && *q.Description != "" {
					line += "  " + *q.Description
				}
				fmt.Fprintln(a.io.Out, line)
			}
			return nil
		}),
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	acceptGlobals(list, "server", "graph", "profile", "cluster")
	cmd.AddCommand(list, a.newQueriesValidateCmd())
	return cmd
}

func (a *app) newGraphsCmd() *cobra.Command {
	cmd := groupCmd("graphs", "List the graphs a server serves", "")
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the graphs of a server (GET /graphs)",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			server := a.g.server
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			if server == "" && a.profileName() != "" {
				server = cfg.Profiles[a.profileName()].Server
			}
			if server == "" {
				server = cfg.Defaults.Server
			}
			if server == "" {
				return usagef("graphs list needs a server: give --server NAME|URL")
			}
			url, _, err := cfg.ServerURL(server)
			if err != nil {
				return usagef("%v", err)
			}
			token, err := cfg.Token(url, os.Getenv)
			if err != nil {
				return err
			}
			gs, err := remote.New(url, "", token, nil).Graphs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					Graphs []remote.GraphEntry `json:"graphs"`
				}{append([]remote.GraphEntry{}, gs...)})
			}
			for _, g := range gs {
				fmt.Fprintf(a.io.Out, "%s  %s\n", g.GraphID, g.URI)
			}
			return nil
		}),
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	acceptGlobals(list, "server", "profile")
	cmd.AddCommand(list)
	return cmd
}

func (a *app) newAliasCmd() *cobra.Command {
	var params, paramsFile, format string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "alias NAME [ARGS...]",
		Short: "Run an operator alias: a stored read query on a named server",
		Long: `Run an alias from the operator config (aliases: in ~/.omnigraph/config.yaml).
Positional ARGS bind to the alias's args in order; --params wins over them,
and they win over the alias's params. Aliases are read-only: a stored
mutation is refused before it runs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			al, ok := cfg.Aliases[args[0]]
			if !ok {
				return usagef("unknown alias %q (aliases: in the operator config)", args[0])
			}
			switch al.Command {
			case "", "read", "query":
			default:
				return fmt.Errorf("alias %s is a %s alias: aliases are read-only", args[0], al.Command)
			}
			if al.Server == "" || al.Graph == "" || al.Query == "" {
				return fmt.Errorf("alias %s needs server, graph and query", args[0])
			}
			if len(args)-1 > len(al.Args) {
				return usagef("alias %s takes at most %d arguments (%s)", args[0], len(al.Args), strings.Join(al.Args, ", "))
			}
			merged := map[string]any{}
			for k, v := range al.Params {
				merged[k] = v
			}
			for i, v := range args[1:] {
				merged[al.Args[i]] = v
			}
			explicit, err := parseParams(a.io.In, params, paramsFile)
			if err != nil {
				return err
			}
			for k, v := range explicit {
				merged[k] = v
			}
			f := format
			if asJSON {
				f = "json"
			}
			if f == "" {
				f = firstNonEmpty(cfg.Defaults.Output, al.Format, "table")
			}
			switch f {
			case "table", "kv", "csv", "jsonl", "json":
			default:
				return usagef("invalid --format %q: use table, kv, csv, jsonl or json", f)
			}
			url, _, err := cfg.ServerURL(al.Server)
			if err != nil {
				return err
			}
			token, err := cfg.Token(url, os.Getenv)
			if err != nil {
				return err
			}
			rc := remote.New(url, al.Graph, token, nil)
			no := false
			raw, err := rc.InvokeQuery(cmd.Context(), al.Query, remote.InvokeRequest{Params: merged, ExpectMutation: &no}, "")
			if err != nil {
				return a.servedErr(err)
			}
			res, err := toReadResult(raw)
			if err != nil {
				return err
			}
			return a.writeRead(f, omnigraph.Target{}, heldRead(res))
		}),
	}
	acceptGlobals(cmd)
	cmd.Flags().StringVar(&params, "params", "", "parameters as a JSON object (win over positional ARGS)")
	cmd.Flags().StringVar(&paramsFile, "params-file", "", "path of a JSON file holding the parameters")
	cmd.Flags().StringVar(&format, "format", "", "output format: table, kv, csv, jsonl or json")
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	cmd.MarkFlagsMutuallyExclusive("params", "params-file")
	cmd.MarkFlagsMutuallyExclusive("format", "json")
	return cmd
}
