package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestStmtReader pins how shell input is cut into statements.
func TestStmtReader(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  []string // statements, meta-commands prefixed with "meta "
	}{
		{"meta on an empty buffer", []string{":branch dev", "  :quit  "}, []string{"meta :branch dev", "meta :quit"}},
		{"blank lines alone are nothing", []string{"", "   "}, nil},
		{"a query runs when its braces balance", []string{"query q() {", "  match { $p: Person }", "  return { $p.name }", "}"},
			[]string{"query q() {\n  match { $p: Person }\n  return { $p.name }\n}"}},
		{"a body ends at ';'", []string{"match { $p: Person }", "return { $p.name };"}, []string{"match { $p: Person }\nreturn { $p.name }"}},
		{"a body ends at a blank line", []string{"match { $p: Person } return { $p.name }", ""}, []string{"match { $p: Person } return { $p.name }"}},
		{"braces in strings and comments do not count", []string{`query q() { match { $p: Person { name: "{" } } // }`, "return { $p.name } }"},
			[]string{"query q() { match { $p: Person { name: \"{\" } } // }\nreturn { $p.name } }"}},
		{"an escaped quote stays in the string", []string{`insert Person { name: "a\"}" };`}, []string{`insert Person { name: "a\"}" }`}},
		{"':' inside a statement is not a meta-command", []string{"query q($n: String) {", ":x", "}"}, []string{"query q($n: String) {\n:x\n}"}},
		{"two statements", []string{"query a() { match { $p: Person } return { $p.name } }", "insert Person { name: \"Z\" };"},
			[]string{"query a() { match { $p: Person } return { $p.name } }", `insert Person { name: "Z" }`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r stmtReader
			var got []string
			for _, l := range tc.lines {
				if s, meta, done := r.add(l); done {
					if meta {
						s = "meta " + s
					}
					got = append(got, s)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || r.pending() {
				t.Fatalf("got %q (pending %v)\nwant %q", got, r.pending(), tc.want)
			}
		})
	}
}

// TestShellPiped: statements from a pipe run in order with no prompts,
// results on stdout, errors on stderr without stopping; any failure makes
// the exit status 1.
func TestShellPiped(t *testing.T) {
	dir, _ := diffGraph(t)
	t.Setenv("OMNIGRAPH_HOME", t.TempDir())
	ok := `:format csv
match { $p: Person } return { $p.name } order { $p.name asc };
:branch feature
query q() {
  match { $p: Person { name: "Bob" } }
  return { $p.age }
}
insert Person { name: "Zed" };
:snapshot main
match { $p: Person { name: "Zed" } } return { $p.name }

:schema`
	// The first run: every statement runs; the pinned read sees no Zed
	// (main never had it); the schema prints last.
	r := runBinIn(t, ok, "shell", "--store", dir)
	want := "p.name\nAlice\nBob\nCharlie\nDiana\np.age\n27\nshell: 1 nodes and 0 edges affected on branch feature, commit "
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, want) || strings.Contains(r.stdout, "Zed\n") ||
		!strings.HasSuffix(r.stdout, "p.name\n// A small social graph: people, the companies they work at, and who knows whom.\nnode Person {\n    name: String @key\n    age: I32?\n}\n\nnode Company {\n    name: String @key\n}\n\nedge Knows: Person -> Person {\n    since: Date?\n}\n\nedge WorksAt: Person -> Company\n") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	cases := []struct {
		name   string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{"errors are reported and the session goes on", "bogus;\n:nope\n:format csv\nmatch { $p: Person { name: \"Bob\" } } return { $p.age };\n", 1,
			"p.age\n26\n", `error: parse error: expected "match", "insert", "update" or "delete", found "bogus" at 1:1`},
		{"quit stops reading", ":quit\nbogus;\n", 0, "", ""},
		{"a pinned commit is read-only", ":snapshot main\ninsert Person { name: \"Q\" };\n", 1, "", "is read-only"},
		{"end of input runs a pending statement", ":format csv\nmatch { $p: Person { name: \"Bob\" } }\nreturn { $p.age }", 0, "p.age\n26\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinIn(t, tc.stdin, "shell", dir)
			if r.code != tc.code || r.stdout != tc.stdout || !strings.Contains(r.stderr, tc.stderr) ||
				strings.Contains(r.stdout+r.stderr, "omnigraph(") {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", r.code, tc.code, r.stdout, r.stderr)
			}
		})
	}
	if r := runBinIn(t, "", "shell", dir, "--format", "yaml"); r.code != 2 {
		t.Fatalf("bad --format: exit %d %s", r.code, r.stderr)
	}
}

// ptyScreen collects what a program writes to a pseudo-terminal.
type ptyScreen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int // offset up to which expect has matched
	done chan struct{}
}

// expect waits until s appears after the previous match. The deadline is
// a safety net for a hung child, not part of what is tested.
func (p *ptyScreen) expect(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p.mu.Lock()
		out := p.buf.String()
		if i := strings.Index(out[p.seen:], s); i >= 0 {
			p.seen += i + len(s)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		select {
		case <-p.done:
			t.Fatalf("shell ended before printing %q; screen:\n%s", s, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the screen:\n%s", s, out)
		}
	}
}

// TestShellTerminal runs the shell on a pseudo-terminal as a person would:
// open it, run a query, switch branch, recall the query from history and
// run it again, run a multi-line query, see an error without leaving, and
// quit; the history is kept on disk.
func TestShellTerminal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no pseudo-terminals")
	}
	dir, _ := diffGraph(t)
	home := t.TempDir()
	cmd := exec.Command(omnigraphBin(t), "shell", dir)
	cmd.Env = append(procEnviron(), "OMNIGRAPH_HOME="+home, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	scr := &ptyScreen{done: make(chan struct{})}
	go func() {
		defer close(scr.done)
		b := make([]byte, 4096)
		for {
			n, err := tty.Read(b)
			scr.mu.Lock()
			scr.buf.Write(b[:n])
			scr.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(tty, s); err != nil {
			t.Fatal(err)
		}
	}
	// The conversation: what is typed, then what the screen shows, in order.
	for _, step := range []struct {
		send string
		want []string
	}{
		{"", []string{"omnigraph shell on " + dir + " (branch main)", "omnigraph(main)> "}},
		{"match { $p: Person } return { $p.name } order { $p.name asc };\r", []string{"shell (4 rows)", "Diana", "omnigraph(main)> "}},
		{":branch feature\r", []string{"switched to branch feature", "omnigraph(feature)> "}},
		{"\x1b[A\x1b[A\r", []string{"shell (4 rows)", "Eve", "omnigraph(feature)> "}}, // Up twice: the query before :branch
		{"query bob() {\r", []string{"..> "}},
		{"  match { $p: Person { name: \"Bob\" } }\r  return { $p.name, $p.age }\r}\r", []string{"bob (1 row)", "Bob     27", "omnigraph(feature)> "}},
		{"bogus;\r", []string{"error: parse error", "omnigraph(feature)> "}},
		{":quit\r", nil},
	} {
		if step.send != "" {
			send(step.send)
		}
		for _, w := range step.want {
			scr.expect(t, w)
		}
	}
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		errors.As(err, &ee)
		t.Fatalf("shell exit: %v\n%s", err, scr.buf.String())
	}
	<-scr.done
	hist, err := os.ReadFile(filepath.Join(home, "shell_history"))
	if err != nil || !strings.Contains(string(hist), ":branch feature\n") || !strings.Contains(string(hist), "query bob() {\n") {
		t.Fatalf("history %q %v", hist, err)
	}
	if st, err := os.Stat(filepath.Join(home, "shell_history")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v %v", st.Mode(), err)
	}
}
