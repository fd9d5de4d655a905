package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/omnigraph-go/omnigraph/internal/server/servertest"
)

// findChrome returns a Chromium binary: $OMNIGRAPH_CHROME, else the first
// of chromium, chromium-browser, google-chrome on PATH; "" when none.
func findChrome() string {
	if p := os.Getenv("OMNIGRAPH_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

const e2eToken = "console-e2e-token"

const (
	setAge     = `query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }`
	addPerson  = `query add($name: String, $age: I32) { insert Person { name: $name, age: $age } }`
	addCompany = `query add_company($name: String) { insert Company { name: $name } }`
	knowsQ     = "query knows() {\n    match { $a: Person  $a knows $b }\n    return { $a.name, $b.name }\n    order { $a.name asc }\n}"
	peopleQ    = "query people() {\n    match { $p: Person }\n    return { $p.name, $p.age }\n    order { $p.name asc }\n}"
	friendsOf  = `query friends_of($name: String) @description("Who a person knows.") { match { $p: Person { name: $name } $p knows $f } return { $f.name } }`
)

// consoleGraph builds the social graph with a merge in main's history
// (branch docs adds Fay while main adds Initech), then a branch "feature"
// that adds Eve and sets Bob's age while main sets it differently: merging
// feature into main conflicts on Bob.
func consoleGraph(t *testing.T) *omnigraph.Graph {
	t.Helper()
	ctx := context.Background()
	g := servertest.SocialGraph(t, filepath.Join(t.TempDir(), "social.omni"), "admin")
	mutate := func(branch, src string, params map[string]any) {
		t.Helper()
		if _, _, err := g.Mutate(ctx, branch, src, "", params, omnigraph.MutateOptions{Actor: "admin"}); err != nil {
			t.Fatalf("mutate on %s: %v", branch, err)
		}
	}
	// History with a merge: docs adds Fay while main adds Initech.
	if err := g.CreateBranch(ctx, "docs", "main", "admin"); err != nil {
		t.Fatal(err)
	}
	mutate("docs", addPerson, map[string]any{"name": "Fay", "age": 52})
	mutate("main", addCompany, map[string]any{"name": "Initech"})
	if res, err := g.Merge(ctx, "docs", "main", "admin"); err != nil || res.Outcome != "merged" {
		t.Fatalf("merge docs: %+v, %v", res, err)
	}
	if err := g.CreateBranch(ctx, "feature", "main", "admin"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		branch, src string
		params      map[string]any
	}{
		{"feature", addPerson, map[string]any{"name": "Eve", "age": 33}},
		{"feature", setAge, map[string]any{"name": "Bob", "age": 26}},
		{"main", setAge, map[string]any{"name": "Bob", "age": 27}},
	} {
		mutate(m.branch, m.src, m.params)
	}
	return g
}

// TestConsoleE2E drives the console in headless Chromium against a server
// that requires a token: log in, run a query and read the table, draw and
// expand the graph view, switch branch, open a commit's changes, diff two
// branches and preview a conflicting merge. With
// OMNIGRAPH_CONSOLE_SCREENSHOTS=DIR it also writes the docs' screenshots.
func TestConsoleE2E(t *testing.T) {
	chrome := findChrome()
	if chrome == "" {
		t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $OMNIGRAPH_CHROME)")
	}
	g := consoleGraph(t)
	srv, err := server.New(context.Background(), server.Config{
		Graphs:     []server.GraphConfig{{ID: "social", Graph: g, URI: g.URI(), Queries: []server.StoredQuery{{Name: "friends_of", Source: friendsOf}}}},
		Tokens:     []server.Token{{Actor: "admin", Token: e2eToken}},
		Authorizer: server.AllowAll{},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.WindowSize(1000, 700), chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// A bound on a hung browser, not a timing assertion.
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()

	b := &browser{t: t, ctx: ctx, shots: os.Getenv("OMNIGRAPH_CONSOLE_SCREENSHOTS")}
	var rows [][]string

	t.Log("log in: a wrong token is refused, the right one opens the graph")
	b.do("wrong token",
		chromedp.EmulateViewport(1000, 700),
		chromedp.Navigate(hs.URL+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-token`)),
		chromedp.SendKeys(chromedp.CSS(`#login-token`), "not-the-token"),
		chromedp.Click(chromedp.CSS(`#login-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-status .status-error`)))
	if text := b.text(`#login-status`); !strings.Contains(text, "invalid bearer token") {
		t.Fatalf("login error = %q", text)
	}
	b.shot("login")
	b.do("log in",
		chromedp.SetValue(chromedp.CSS(`#login-token`), e2eToken),
		chromedp.Click(chromedp.CSS(`#login-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#tabs`)),
		chromedp.WaitReady(chromedp.CSS(`#stored-select option[value="friends_of"]`)))
	if tok := eval[string](b, `sessionStorage.getItem('omnigraph.console.token')`); tok != e2eToken {
		t.Fatalf("token in sessionStorage = %q", tok)
	}

	t.Log("completion: after $p. the editor offers Person's properties")
	b.setEditor("query q() { match { $p: Person } return { $p")
	b.do("complete", chromedp.Focus(chromedp.CSS(`#editor`)),
		chromedp.SendKeys(chromedp.CSS(`#editor`), "."),
		chromedp.WaitVisible(chromedp.CSS(`#completions li`)))
	if got := eval[[]string](b, `[...document.querySelectorAll('#completions li .label')].map(l => l.textContent)`); fmt.Sprint(got) != "[name age]" {
		t.Fatalf("completions = %v", got)
	}
	b.do("accept", chromedp.Click(chromedp.CSS(`#completions li:first-child`)))
	if v := eval[string](b, `document.getElementById('editor').value`); !strings.HasSuffix(v, "$p.name") {
		t.Fatalf("editor after accepting = %q", v)
	}

	t.Log("run a query and read the table")
	b.setEditor(knowsQ)
	b.do("query table", chromedp.Click(chromedp.CSS(`#run`)), chromedp.WaitVisible(chromedp.CSS(`#rows tbody tr`)))
	if rows = b.rows(`#rows`); fmt.Sprint(rows) != fmt.Sprint([][]string{{"Alice", "Bob"}, {"Bob", "Carol"}, {"Carol", "Dave"}}) {
		t.Fatalf("table rows = %v", rows)
	}
	b.shot("query-table")

	t.Log("graph view: four people, three knows edges; expanding Alice adds her company")
	b.do("graph view", chromedp.Click(chromedp.CSS(`#result-tabs button[data-view="graph"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#result-graph g.node`)))
	if n := eval[int](b, `document.querySelectorAll('#result-graph g.node').length`); n != 4 {
		t.Fatalf("drawn nodes = %d, want 4", n)
	}
	if n := eval[int](b, `document.querySelectorAll('#result-graph g.edge').length`); n != 3 {
		t.Fatalf("drawn edges = %d, want 3", n)
	}
	eval[bool](b, `(() => { const g = [...document.querySelectorAll('#result-graph g.node')].find(g => g.textContent.startsWith('Alice'));
		g.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()`)
	b.do("expand Alice", chromedp.WaitVisible(chromedp.CSS(`#graph-status .status-ok`)), chromedp.ScrollIntoView(chromedp.CSS(`#result-graph-box`)))
	if n := eval[int](b, `document.querySelectorAll('#result-graph g.node').length`); n != 5 {
		t.Fatalf("nodes after expanding Alice = %d, want 5 (Acme added)", n)
	}
	b.shot("graph")

	t.Log("switch branch: feature has Eve and Bob at 26")
	b.do("table view", chromedp.Click(chromedp.CSS(`#result-tabs button[data-view="table"]`)))
	b.selectValue(`#branch-select`, "feature")
	b.setEditor(peopleQ)
	b.do("run on feature", chromedp.Click(chromedp.CSS(`#run`)), chromedp.WaitVisible(chromedp.CSS(`#rows tbody tr:nth-child(6)`)))
	if rows = b.rows(`#rows`); fmt.Sprint(rows) != fmt.Sprint([][]string{{"Alice", "30"}, {"Bob", "26"}, {"Carol", "41"}, {"Dave", "19"}, {"Eve", "33"}, {"Fay", "52"}}) {
		t.Fatalf("feature rows = %v", rows)
	}

	t.Log("a stored query with a parameter")
	b.selectValue(`#stored-select`, "friends_of")
	b.do("stored query", chromedp.WaitVisible(chromedp.CSS(`#param-name`)),
		chromedp.SendKeys(chromedp.CSS(`#param-name`), "Alice"),
		chromedp.Click(chromedp.CSS(`#run`)),
		chromedp.WaitVisible(chromedp.CSS(`#rows tbody tr`)))
	if rows = b.rows(`#rows`); fmt.Sprint(rows) != fmt.Sprint([][]string{{"Bob"}}) {
		t.Fatalf("friends_of(Alice) = %v", rows)
	}

	t.Log("schema view with counts on feature")
	b.do("schema", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="schema"]`)), chromedp.WaitVisible(chromedp.CSS(`#schema-view[data-branch="feature"] #schema-nodes tbody tr`)))
	if got := eval[[][]string](b, `[...document.querySelectorAll('#schema-nodes tbody tr')].map(r => [r.cells[0].textContent, r.cells[3].textContent])`); fmt.Sprint(got) != fmt.Sprint([][]string{{"Person", "6"}, {"Company", "3"}}) {
		t.Fatalf("schema counts = %v", got)
	}
	b.shot("schema")

	t.Log("the log of main shows the merge of docs, and its changes are what it brought")
	b.selectValue(`#branch-select`, "main")
	b.do("main log", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="commits"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#commit-list[data-branch="main"] li.merge .commit-open`)),
		chromedp.Click(chromedp.CSS(`#commit-list li.merge .commit-open`)),
		chromedp.WaitVisible(chromedp.CSS(`#commit-changes li.change`)))
	if text := b.text(`#commit-changes`); !strings.Contains(text, "insert") || !strings.Contains(text, "Fay") || strings.Contains(text, "Initech") {
		t.Fatalf("merge commit changes = %q", text)
	}
	b.shot("commits")
	b.selectValue(`#branch-select`, "feature") // the commits tab reloads for the branch

	t.Log("open a commit's changes: feature's newest commit updates Bob")
	b.do("feature log", chromedp.WaitVisible(chromedp.CSS(`#commit-list[data-branch="feature"] li .commit-open`)))
	// The newest commit by admin (automatic compaction may have added a
	// maintenance commit after it, which changes no entity).
	id := eval[string](b, `[...document.querySelectorAll('#commit-list li')].find(li => li.textContent.includes('admin')).dataset.id`)
	b.do("commit changes", chromedp.Click(chromedp.CSS(`#commit-list li[data-id="`+id+`"] .commit-open`)),
		chromedp.WaitVisible(chromedp.CSS(`#commit-changes li.change`)))
	if text := b.text(`#commit-changes`); !strings.Contains(text, "update") || !strings.Contains(text, "Bob") || !strings.Contains(text, "26") {
		t.Fatalf("commit changes = %q", text)
	}

	t.Log("branch-to-branch diff")
	b.do("diff tab", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="diff"]`)))
	b.selectValue(`#diff-from`, "main")
	b.selectValue(`#diff-to`, "feature")
	b.do("diff", chromedp.Click(chromedp.CSS(`#diff-run`)), chromedp.WaitVisible(chromedp.CSS(`#diff-summary`)))
	if text := b.text(`#diff-summary`); !strings.HasPrefix(text, "2 changes from main") {
		t.Fatalf("diff summary = %q", text)
	}
	b.shot("diff")

	t.Log("merge preview with a conflict")
	b.do("merge tab", chromedp.Click(chromedp.CSS(`#tabs button[data-tab="merge"]`)))
	b.selectValue(`#merge-source`, "feature")
	b.selectValue(`#merge-target`, "main")
	b.do("merge preview", chromedp.Click(chromedp.CSS(`#merge-preview`)), chromedp.WaitVisible(chromedp.CSS(`#merge-outcome`)))
	text := b.text(`#merge-outcome`)
	conflicts := eval[[][]string](b, `[...document.querySelectorAll('table.conflicts tbody tr')].map(r => [r.cells[0].textContent, r.cells[3].textContent])`)
	disabled := eval[bool](b, `document.getElementById('merge-run').disabled`)
	if !strings.Contains(text, "1 conflicts") || fmt.Sprint(conflicts) != fmt.Sprint([][]string{{"divergent_update", "Bob"}}) || !disabled {
		t.Fatalf("merge preview = %q, conflicts %v, merge button disabled %v", text, conflicts, disabled)
	}
	b.shot("merge-preview")

	t.Log("sign out forgets the token")
	b.do("sign out", chromedp.Click(chromedp.CSS(`#logout`)), chromedp.WaitVisible(chromedp.CSS(`#login-token`)))
	if tok := eval[string](b, `sessionStorage.getItem('omnigraph.console.token') ?? ''`); tok != "" {
		t.Fatalf("token after sign out = %q", tok)
	}
}

// browser is one headless tab and the helpers the e2e steps use.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string // OMNIGRAPH_CONSOLE_SCREENSHOTS: where to write PNGs ("" = none)
}

func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return v
}

// rows reads a table's body as text cells.
func (b *browser) rows(table string) [][]string {
	b.t.Helper()
	return eval[[][]string](b, fmt.Sprintf(`[...document.querySelectorAll('%s tbody tr')].map(r => [...r.cells].map(c => c.textContent))`, table))
}

// setEditor replaces the editor text the way typing does (an input event).
func (b *browser) setEditor(src string) {
	b.t.Helper()
	eval[bool](b, fmt.Sprintf(`(() => { const ta = document.getElementById('editor'); ta.value = %q;
		ta.dispatchEvent(new InputEvent('input', {bubbles: true})); return true; })()`, src))
}

// selectValue picks an option of a <select> and fires its change event.
func (b *browser) selectValue(sel, v string) {
	b.t.Helper()
	eval[bool](b, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q;
		s.dispatchEvent(new Event('change', {bubbles: true})); return s.value === %q; })()`, sel, v, v))
}

// shot writes a viewport screenshot when screenshots were asked for.
func (b *browser) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
