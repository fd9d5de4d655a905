package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/opconfig"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/spf13/cobra"
)

const shellHelp = `Statements (.gq):
  query NAME(...) { ... }     a full query; it runs when its braces close
  match { ... } return { ... };
  insert Person { name: "Eve" };
                              a query body: ends with ';' (or a blank line)
                              and runs as 'query shell() { ... }'
  a blank line also ends a statement; read queries print their rows,
  mutations commit on the session's branch.
Meta-commands:
  :branch [NAME]              show the branch, or switch to NAME (its head)
  :snapshot [REV|none]        show the pinned commit, pin REV (a commit id,
                              prefix, BRANCH~N…; reads only), or unpin
  :format table|kv|csv|jsonl|json
                              how read results print
  :params [JSON|none]         show, set or clear the parameters of the
                              following statements ({"name": "Ada"})
  :schema                     print the schema at the session's target
  :reset                      drop a partly typed statement
  :help                       this text
  :quit                       leave (also :exit, Ctrl-D, Ctrl-C)
`

type shellOptions struct {
	uri    string
	branch string
	format string
}

func (a *app) newShellCmd() *cobra.Command {
	var o shellOptions
	cmd := &cobra.Command{
		Use:   "shell [URI]",
		Short: "An interactive .gq session on a graph",
		Long: `Open an interactive session on a graph: type .gq queries and mutations and
see their results as tables; switch branches and pin commits without
leaving it.

The graph is addressed like the other commands: a positional URI, --uri,
--store, or the operator config's default store (or --profile).

A statement that starts with 'query' runs as soon as its braces close; any
statement ends with a ';' at the end of a line or with a blank line, so
multi-line input needs no continuation marks. A statement that is only a
query body (match … return …, insert …, update …, delete …) runs as
'query shell() { … }'. Meta-commands start with ':' (:help lists them):

` + shellHelp + `
At a terminal the line editor has history (Up/Down, kept in
$OMNIGRAPH_HOME/shell_history, by default ~/.omnigraph/shell_history) and
the usual keys (Left/Right, Home/End, Ctrl-A/E/K/U/W). An error is printed
and the session goes on.

With standard input not a terminal (a pipe or a file) the statements are
read from it, with no prompts, results on stdout and errors on stderr; the
exit status is 1 if any statement failed.

  omnigraph shell ./social.omni
  printf 'match { $p: Person } return { $p.name };\n' | omnigraph shell ./social.omni`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runShell(cmd, args, &o)
		}),
	}
	acceptGlobals(cmd, "store", "profile", "graph", "as", "quiet")
	f := cmd.Flags()
	f.StringVar(&o.uri, "uri", "", "graph URI")
	f.StringVar(&o.branch, "branch", "main", "branch the session starts on")
	f.StringVar(&o.format, "format", "", "result format: table|kv|csv|jsonl|json (default: defaults.output, else table)")
	return cmd
}

// shellFormats are the result formats of :format (those of query --format).
var shellFormats = []string{"table", "kv", "csv", "jsonl", "json"}

// shellSession is one shell's state. Its app prints through the session's
// streams (at a terminal: the line editor, which owns the screen).
type shellSession struct {
	a        *app
	g        *omnigraph.Graph
	uri      string
	branch   string
	snapshot string // a pinned commit id; "" reads and writes the branch head
	format   string
	params   map[string]any
	quiet    bool // piped input: no confirmations
}

func (a *app) runShell(cmd *cobra.Command, args []string, o *shellOptions) error {
	format := o.format
	if format == "" {
		format = "table"
		if cfg, err := a.operator(); err == nil && cfg.Defaults.Output != "" {
			format = cfg.Defaults.Output
		}
	}
	if !slices.Contains(shellFormats, format) {
		return usagef("invalid --format %q: use %s", format, strings.Join(shellFormats, ", "))
	}
	g, uri, err := a.open(cmd, args, o.uri)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if _, _, err := g.Tables(ctx, omnigraph.Target{Branch: o.branch}); err != nil {
		return err
	}
	s := &shellSession{g: g, uri: uri, branch: o.branch, format: format, params: map[string]any{}}
	in, isFile := a.io.In.(*os.File)
	out, outFile := a.io.Out.(*os.File)
	if isFile && outFile && term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd())) {
		return s.interactive(ctx, a, in, out)
	}
	s.a, s.quiet = a, true
	failed := s.loop(ctx, func(string) (string, error) { return "", nil }, bufio.NewReaderSize(a.io.In, 1<<16))
	if failed > 0 {
		return &SilentError{Err: fmt.Errorf("%w: %s failed", errReported, plural(failed, "statement"))}
	}
	return nil
}

// interactive runs the session on a terminal in raw mode with the line
// editor of golang.org/x/term and a persisted history.
func (s *shellSession) interactive(ctx context.Context, a *app, in, out *os.File) error {
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return err
	}
	defer func() { _ = term.Restore(int(in.Fd()), old) }()
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")
	if w, h, err := term.GetSize(int(out.Fd())); err == nil {
		_ = t.SetSize(w, h)
	}
	hist, herr := openShellHistory()
	if hist != nil {
		defer hist.close()
		t.History = hist
	}
	sa := *a
	sa.io = &IO{In: in, Out: t, Err: t, StdoutTTY: true, StderrTTY: true}
	s.a = &sa
	fmt.Fprintf(t, "omnigraph shell on %s (branch %s). Type :help for help, :quit to leave.\n", s.uri, s.branch)
	if herr != nil {
		fmt.Fprintf(t, "warning: history is not kept: %v\n", herr)
	}
	s.loop(ctx, func(prompt string) (string, error) {
		t.SetPrompt(prompt)
		line, err := t.ReadLine()
		if errors.Is(err, term.ErrPasteIndicator) {
			err = nil
		}
		return line, err
	}, nil)
	return nil
}

// loop reads statements until :quit or the end of input and returns how
// many failed. readLine prompts at a terminal; r, if set, is read instead.
func (s *shellSession) loop(ctx context.Context, readLine func(prompt string) (string, error), r *bufio.Reader) int {
	var sr stmtReader
	failed := 0
	for {
		var line string
		var err error
		if r != nil {
			line, err = r.ReadString('\n')
			line = strings.TrimRight(line, "\r\n")
			if err == io.EOF && line != "" {
				err = nil // a last line without a newline still counts; EOF comes next
			}
		} else {
			line, err = readLine(s.prompt(sr.pending()))
		}
		if err != nil {
			// End of input runs a statement still pending, as a blank line would.
			if sr.pending() {
				stmt, _, _ := sr.add("")
				if !s.run(ctx, stmt) {
					failed++
				}
			}
			return failed
		}
		if strings.TrimSpace(line) == ":reset" {
			sr.reset()
			continue
		}
		stmt, meta, done := sr.add(line)
		if !done {
			continue
		}
		if meta {
			quit, err := s.meta(ctx, stmt)
			if err != nil {
				s.printErr(err)
				failed++
			}
			if quit {
				return failed
			}
			continue
		}
		if !s.run(ctx, stmt) {
			failed++
		}
	}
}

// prompt names the session's target; a continuation prompt when a
// statement is partly typed.
func (s *shellSession) prompt(cont bool) string {
	where := s.branch
	if s.snapshot != "" {
		where = "@" + shortID(s.snapshot)
	}
	p := "omnigraph(" + where + ")> "
	if cont {
		return strings.Repeat(" ", len(p)-4) + "..> "
	}
	return p
}

func shortID(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}

func (s *shellSession) target() omnigraph.Target {
	if s.snapshot != "" {
		return omnigraph.Target{Snapshot: s.snapshot}
	}
	return omnigraph.Target{Branch: s.branch}
}

func (s *shellSession) printErr(err error) {
	fmt.Fprintf(s.a.io.Err, "error: %v%s\n", friendlyUsage(err), sourcePosition(err))
}

// say prints a confirmation (not for piped input, whose stdout holds only
// results).
func (s *shellSession) say(format string, args ...any) {
	if !s.quiet {
		fmt.Fprintf(s.a.io.Out, format+"\n", args...)
	}
}

// run executes one statement and prints its result or its error; it
// reports success.
func (s *shellSession) run(ctx context.Context, stmt string) bool {
	if stmt == "" {
		return true
	}
	if err := s.exec(ctx, shellSource(stmt)); err != nil {
		var qe *query.Error
		if !isQueryDecl(stmt) && errors.As(err, &qe) && qe.Line == 1 && qe.Col > len(shellWrapOpen) {
			// Point at the user's column, not the wrapper's.
			adj := *qe
			adj.Col -= len(shellWrapOpen)
			err = &adj
		}
		s.printErr(err)
		return false
	}
	return true
}

func (s *shellSession) exec(ctx context.Context, src string) error {
	t := s.target()
	info, err := s.g.DescribeQuery(ctx, t, src, "")
	if err != nil {
		return err
	}
	if !info.Mutation {
		return s.g.QueryStream(ctx, t, src, "", s.params, func(st *omnigraph.ReadStream) error {
			return s.a.writeRead(s.format, t, streamedRead(st))
		})
	}
	if s.snapshot != "" {
		return fmt.Errorf("the session is pinned to commit %s, which is read-only: ':snapshot none' or ':branch NAME' to write", s.snapshot)
	}
	res, name, err := s.g.Mutate(ctx, s.branch, src, "", s.params, omnigraph.MutateOptions{Actor: s.a.g.as})
	if err != nil {
		return err
	}
	s.a.printChange(name, s.branch, res.AffectedNodes, res.AffectedEdges, res.Commit, res.Warnings)
	return nil
}

// meta runs one meta-command; quit ends the session.
func (s *shellSession) meta(ctx context.Context, line string) (quit bool, err error) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, ":"), " ")
	arg = strings.TrimSpace(arg)
	out := s.a.io.Out
	switch name {
	case "quit", "q", "exit":
		return true, nil
	case "help", "h", "?":
		fmt.Fprint(out, shellHelp)
	case "branch":
		if arg == "" {
			fmt.Fprintln(out, s.branch)
			return false, nil
		}
		if _, _, err := s.g.Tables(ctx, omnigraph.Target{Branch: arg}); err != nil {
			return false, err
		}
		s.branch, s.snapshot = arg, ""
		s.say("switched to branch %s", arg)
	case "snapshot":
		switch arg {
		case "":
			if s.snapshot == "" {
				fmt.Fprintf(out, "(none: reading the head of %s)\n", s.branch)
			} else {
				fmt.Fprintln(out, s.snapshot)
			}
		case "none", "off", "-":
			s.snapshot = ""
			s.say("reading the head of %s", s.branch)
		default:
			c, err := s.g.Commit(ctx, arg)
			if err != nil {
				return false, err
			}
			s.snapshot = c.ID
			s.say("pinned to commit %s (height %d); reads only", c.ID, c.ManifestVersion)
		}
	case "format":
		if arg == "" {
			fmt.Fprintln(out, s.format)
			return false, nil
		}
		if !slices.Contains(shellFormats, arg) {
			return false, usagef("unknown format %q: use %s", arg, strings.Join(shellFormats, ", "))
		}
		s.format = arg
		s.say("format %s", arg)
	case "params":
		switch arg {
		case "":
			b, _ := json.Marshal(s.params)
			fmt.Fprintln(out, string(b))
		case "none", "{}":
			s.params = map[string]any{}
			s.say("parameters cleared")
		default:
			p, err := parseParams(nil, arg, "")
			if err != nil {
				return false, err
			}
			s.params = p
			s.say("parameters set")
		}
	case "schema":
		src, err := s.g.SchemaSource(ctx, s.target())
		if err != nil {
			return false, err
		}
		fmt.Fprint(out, strings.TrimRight(src, "\n")+"\n")
	default:
		return false, usagef("unknown meta-command :%s (:help lists them)", name)
	}
	return false, nil
}

// shellHistory is the line editor's history, kept in a file: the last
// maxShellHistory lines are loaded at start, each new one appended.
type shellHistory struct {
	lines []string // oldest first
	f     *os.File
}

const maxShellHistory = 1000

// openShellHistory opens $OMNIGRAPH_HOME/shell_history (mode 0600; the
// directory is created 0700). On error the returned history (if any) is
// kept in memory only.
func openShellHistory() (*shellHistory, error) {
	h := &shellHistory{}
	home, err := opconfig.Home(os.Getenv)
	if err != nil {
		return h, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return h, err
	}
	path := filepath.Join(home, "shell_history")
	if b, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				h.lines = append(h.lines, l)
			}
		}
		if len(h.lines) > maxShellHistory {
			h.lines = h.lines[len(h.lines)-maxShellHistory:]
		}
	}
	if h.f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return h, err
	}
	return h, nil
}

// Add implements term.History.
func (h *shellHistory) Add(entry string) {
	if strings.TrimSpace(entry) == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == entry) {
		return
	}
	h.lines = append(h.lines, entry)
	if len(h.lines) > maxShellHistory {
		h.lines = h.lines[1:]
	}
	if h.f != nil {
		_, _ = h.f.WriteString(entry + "\n")
	}
}

// Len implements term.History.
func (h *shellHistory) Len() int { return len(h.lines) }

// At implements term.History: 0 is the most recent entry.
func (h *shellHistory) At(i int) string { return h.lines[len(h.lines)-1-i] }

func (h *shellHistory) close() {
	if h.f != nil {
		_ = h.f.Close()
	}
}
