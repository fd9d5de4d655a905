package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/opconfig"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// IO is the command's view of the terminal, injected so tests can capture
// output and fake a TTY.
type IO struct {
	In        io.Reader
	Out       io.Writer
	Err       io.Writer
	StdoutTTY bool
	StderrTTY bool
}

// SystemIO returns the process's standard streams.
func SystemIO() *IO {
	return &IO{
		In:        os.Stdin,
		Out:       os.Stdout,
		Err:       os.Stderr,
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// globals holds the flags valid before or after any subcommand
// (spec/surfaces.md §1.1).
type globals struct {
	as      string
	server  string
	graph   string
	profile string
	store   string
	cluster string
	yes     bool
	quiet   bool
	// cacheDir is --cache-dir: the disk cache for remote graphs.
	cacheDir string
	version  bool
}

// app is one invocation of the CLI.
type app struct {
	io      *IO
	g       globals
	running bool // set once a command's RunE starts; errors before it are usage errors
	opcfg   *opconfig.Config
	// printedJSON: the command printed a JSON document (its result, or a
	// conflict body), so a failure prints no second one.
	printedJSON bool
}

// globalFlagNames lists every global flag; commands declare the subset they
// accept with acceptGlobals, and any other global given is a usage error,
// never silently ignored.
var globalFlagNames = []string{"as", "server", "graph", "profile", "store", "cluster", "yes", "quiet"}

const acceptAnnotation = "omnigraph/globals"

func acceptGlobals(cmd *cobra.Command, names ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[acceptAnnotation] = strings.Join(names, ",")
}

// Main runs the CLI with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdio *IO) int {
	a := &app{io: stdio}
	root := a.newRoot()
	root.SetArgs(rewriteArgs(args))
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !a.running {
		var se *SilentError
		if !errors.As(err, &se) && !errors.As(err, new(*UsageError)) {
			err = &UsageError{Err: err}
		}
	}
	code := ExitCode(err)
	if err != nil {
		var se *SilentError
		if !errors.As(err, &se) && !a.printedJSON && jsonRequested(cmd) {
			a.printErrorJSON(err)
		}
		if !errors.As(err, &se) {
			fmt.Fprintf(stdio.Err, "error: %v%s%s\n", friendlyUsage(err), sourcePosition(err), suggestCommand(root, err))
			var ue *UsageError
			if errors.As(err, &ue) {
				path := "omnigraph"
				if cmd != nil {
					path = cmd.CommandPath()
				}
				fmt.Fprintf(stdio.Err, "Run '%s --help' for usage.\n", path)
			}
			if errors.Is(err, omnigraph.ErrNoSpace) {
				fmt.Fprintln(stdio.Err, "hint: the disk (or quota) of the graph's storage is full; the write had no effect and removed what it had written. Free some space and run it again.")
			}
		}
	}
	return code
}

// sourcePosition locates a .gq compile error whose text does not already
// (type errors: their text is part of the reference contract, so the
// position is added here, where only people read it).
func sourcePosition(err error) string {
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Line <= 0 || strings.Contains(err.Error(), fmt.Sprintf(" at %d:%d", qe.Line, qe.Col)) {
		return ""
	}
	return fmt.Sprintf(" (at line %d, column %d)", qe.Line, qe.Col)
}

// requiredFlags and exclusiveFlags match cobra's messages for missing
// required flags and for mutually exclusive flags given together;
// unknownCommand its message for an unknown subcommand.
var (
	requiredFlags  = regexp.MustCompile(`^required flag\(s\) (.*) not set$`)
	exclusiveFlags = regexp.MustCompile(`^if any flags in the group \[([^\]]*)\] are set none of the others can be`)
	unknownCommand = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)
)

// suggestCommand adds "did you mean …?" to an unknown-command error.
func suggestCommand(root *cobra.Command, err error) string {
	m := unknownCommand.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	parent := root
	if fields := strings.Fields(m[2]); len(fields) > 1 {
		if c, _, ferr := root.Find(fields[1:]); ferr == nil {
			parent = c
		}
	}
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2
	}
	if s := parent.SuggestionsFor(m[1]); len(s) > 0 {
		return fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
	}
	return ""
}

// friendlyUsage rewrites cobra's terse usage messages into ones that name
// the fix; other errors pass unchanged.
func friendlyUsage(err error) error {
	var ue *UsageError
	if !errors.As(err, &ue) {
		return err
	}
	if m := exclusiveFlags.FindStringSubmatch(ue.Err.Error()); m != nil {
		var names []string
		for _, n := range strings.Fields(m[1]) {
			names = append(names, "--"+n)
		}
		return fmt.Errorf("%s cannot be used together: give one of them", strings.Join(names, " and "))
	}
	if m := requiredFlags.FindStringSubmatch(ue.Err.Error()); m != nil {
		var names []string
		for _, q := range strings.Split(m[1], ", ") {
			names = append(names, "--"+strings.Trim(q, `"`))
		}
		verb := "is"
		if len(names) > 1 {
			verb = "are"
		}
		return fmt.Errorf("%s %s required", strings.Join(names, " and "), verb)
	}
	return err
}

// rewriteArgs applies the argv-level shims of spec/surfaces.md §1.9:
// `check`, `query lint` and `query check` all mean `lint`.
func rewriteArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i, s := range out {
		if strings.HasPrefix(s, "-") {
			continue
		}
		switch {
		case s == "check":
			out[i] = "lint"
		case s == "query" && i+1 < len(out) && (out[i+1] == "lint" || out[i+1] == "check"):
			out = append(out[:i], out[i+1:]...)
			out[i] = "lint"
		}
		break
	}
	return out
}

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "omnigraph",
		Short: "A typed property-graph database with Git-style branches and commits",
		Long: `omnigraph manages typed property graphs stored in a local directory or on
S3-compatible object storage. Declare a schema in .pg, load JSONL, query and
mutate with .gq, branch, merge and time-travel across the whole graph.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNonEmptyFlags(cmd); err != nil {
				return err
			}
			return a.checkGlobals(cmd)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.g.version {
				a.running = true
				fmt.Fprintf(a.io.Out, "omnigraph %s\n", Version)
				return nil
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.g.as, "as", "", "actor id recorded on commits made by this command")
	pf.StringVar(&a.g.server, "server", "", "served scope: a server name from the operator config or an http(s):// URL")
	pf.StringVar(&a.g.graph, "graph", "", "graph selector inside a multi-graph scope")
	pf.StringVar(&a.g.profile, "profile", "", "named scope bundle from the operator config (env OMNIGRAPH_PROFILE)")
	pf.StringVar(&a.g.store, "store", "", "direct storage address of one graph (path, file://, s3://)")
	pf.StringVar(&a.g.cluster, "cluster", "", "cluster directory or storage root")
	pf.BoolVar(&a.g.yes, "yes", false, "consent to destructive writes against a non-local target")
	pf.BoolVar(&a.g.quiet, "quiet", false, "suppress the resolved-write-target echo on stderr")
	pf.StringVar(&a.g.cacheDir, "cache-dir", "", "local directory caching immutable objects of s3:// graphs across runs (env OMNIGRAPH_CACHE_DIR)")
	root.Flags().BoolVarP(&a.g.version, "version", "v", false, "print the version and exit")

	root.AddCommand(a.newVersionCmd(), a.newLintCmd(), a.newInitCmd(), a.newLoadCmd(), a.newIngestCmd(), a.newBlobCmd(), a.newQueryCmd(),
		a.newMutateCmd(), a.newSnapshotCmd(), a.newExportCmd(), a.newCommitCmd(), a.newDiffCmd(), a.newSchemaCmd(), a.newBranchCmd(), a.newChangesCmd(),
		a.newOptimizeCmd(), a.newCleanupCmd())
	root.AddCommand(a.newVerifyCmd(), a.newRepairCmd())
	root.AddCommand(a.newClusterCmd(), a.newPolicyCmd(), a.newQueriesCmd(), a.newGraphsCmd(), a.newAliasCmd(),
		a.newLoginCmd(), a.newLogoutCmd(), a.newProfileCmd(), a.newEmbedCmd(), a.newShellCmd(), a.newMCPCmd(), a.newUICmd())
	a.wireServed(root)
	a.wireCompletion(root)
	a.wireAddressHints(root)
	root.SetHelpCommand(&cobra.Command{Hidden: true, Use: "no-help"})
	root.SetUsageTemplate(root.UsageTemplate() + capabilitiesLegend)
	return root
}

const capabilitiesLegend = `
Capabilities:
  embedded graph (a directory path, file:// URL or --store): init, load, query, mutate,
    branch create|list|delete|merge, snapshot, export, commit list|show|changes, diff,
    changes poll|baseline, schema show|plan|apply, optimize, cleanup, verify, repair, shell
  served (--server NAME|URL --graph ID, or --profile NAME): query, mutate, load, export,
    snapshot, branch create|list|delete|merge, commit list|show, schema show,
    queries list, graphs list; query NAME without --query/-e runs a stored query
  offline: lint (with --schema)
  control: cluster validate|plan|import|refresh|apply|status|approve|force-unlock (--config DIR),
    policy validate|test|explain (--cluster DIR|URI [--graph ID])
  local: version, ui --store URI (the web console on a local graph), embed (offline JSONL embedding),
    alias NAME [ARGS...] (an operator alias: a stored read on a named server),
    login NAME, logout NAME, profile list|show
  agents: mcp (--store URI | --server URL --graph ID): an MCP server over stdio
`

// checkGlobals rejects global flags the command cannot use.
func (a *app) checkGlobals(cmd *cobra.Command) error {
	allowed := map[string]bool{}
	if s, ok := cmd.Annotations[acceptAnnotation]; ok && s != "" {
		for _, n := range strings.Split(s, ",") {
			allowed[n] = true
		}
	}
	for _, n := range globalFlagNames {
		f := cmd.Flags().Lookup(n)
		if f != nil && f.Changed && !allowed[n] {
			return usagef("flag --%s cannot be used with `%s`", n, cmd.CommandPath())
		}
	}
	return nil
}

// run marks the start of real work: errors from here on are not usage errors.
func (a *app) run(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.running = true
		return fn(cmd, args)
	}
}

// groupCmd is a command that only holds subcommands (`branch`, `commit`,
// …): run bare it prints its help, and it takes no arguments of its own.
func groupCmd(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(subs...)
	return cmd
}
