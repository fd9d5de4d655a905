package exec

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/scenarios scripts")

// TestScenarios runs the stateful branch and merge scenarios of
// testdata/scenarios/*.txt. A script is a sequence of cases:
//
//	command args…
//	input lines…
//	----
//	expected output lines…
//
// separated by blank lines; '#' lines are comments. Commands: init (input:
// the schema), load BRANCH [MODE] (input: JSONL), branch NAME [FROM],
// mutate BRANCH (input: a query named q), merge SOURCE TARGET, rows BRANCH TYPE
// (every row, by id, with its non-null properties), log BRANCH (commit
// kinds, newest first). Errors print as "error: <kind>: <message>".
// go test -run TestScenarios -rewrite regenerates the expected output.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenario(t, f) })
	}
}

type scenarioCase struct {
	notes  []string // comment lines before the case, kept by -rewrite
	cmd    string
	input  []string
	expect []string
}

func parseScenario(t *testing.T, path string) []scenarioCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []scenarioCase
	var cur *scenarioCase
	var notes []string
	inExpect := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && line == "":
		case cur == nil && strings.HasPrefix(line, "#"):
			notes = append(notes, line)
		case cur == nil:
			cur = &scenarioCase{notes: notes, cmd: line}
			notes = nil
		case !inExpect && line == "----":
			inExpect = true
		case !inExpect:
			cur.input = append(cur.input, line)
		case line == "":
			out = append(out, *cur)
			cur, inExpect = nil, false
		default:
			cur.expect = append(cur.expect, line)
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

func runScenario(t *testing.T, path string) {
	ctx := context.Background()
	cases := parseScenario(t, path)
	var g *Graph
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var got strings.Builder
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		out, err := func() (string, error) {
			switch f[0] {
			case "init":
				var err error
				g, err = Init(ctx, storage.NewMem(), "s.pg", strings.Join(c.input, "\n"), "test", Options{Now: now})
				return "ok", err
			case "load":
				mode := LoadAppend
				if len(f) > 2 {
					mode = LoadMode(f[2])
				}
				res, err := g.Load(ctx, strings.NewReader(strings.Join(c.input, "\n")+"\n"), LoadRequest{Branch: f[1], Mode: mode, Actor: "test"})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("ok records=%d", res.Total), nil
			case "branch":
				from := ""
				if len(f) > 2 {
					from = f[2]
				}
				return "ok", g.CreateBranch(ctx, f[1], from, "test")
			case "mutate":
				snap, err := g.Resolve(ctx, Target{Branch: f[1]})
				if err != nil {
					return "", err
				}
				plan, err := query.CompileQuery(snap.Catalog(), "m.gq", strings.Join(c.input, "\n"), "q")
				if err != nil {
					return "", err
				}
				res, err := g.Mutate(ctx, f[1], plan, nil, MutateOptions{Actor: "test"})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("ok affected_nodes=%d affected_edges=%d", res.AffectedNodes, res.AffectedEdges), nil
			case "merge":
				res, err := g.Merge(ctx, f[1], f[2], "test")
				if err != nil {
					return "", err
				}
				return string(res.Outcome), nil
			case "rows":
				return scenarioRows(ctx, g, f[1], f[2])
			case "log":
				cs, err := g.Log(ctx, f[1], 0)
				if err != nil {
					return "", err
				}
				kinds := make([]string, len(cs))
				for i, c := range cs {
					kinds[i] = c.Kind
				}
				return strings.Join(kinds, " "), nil
			}
			return "", fmt.Errorf("unknown command %q", f[0])
		}()
		if err != nil {
			out = "error: " + scenarioErrKind(err) + ": " + err.Error()
		}
		for _, l := range c.notes {
			got.WriteString(l + "\n")
		}
		got.WriteString(c.cmd + "\n")
		for _, l := range c.input {
			got.WriteString(l + "\n")
		}
		got.WriteString("----\n" + out + "\n\n")
		if want := strings.Join(c.expect, "\n"); !*rewrite && out != want {
			t.Errorf("%s: %s\n got: %s\nwant: %s", filepath.Base(path), c.cmd, out, want)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimSuffix(got.String(), "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scenarioErrKind names the typed error a scenario step failed with.
func scenarioErrKind(err error) string {
	var mc *MergeConflictsError
	var ce *ConstraintError
	switch {
	case errors.As(err, &mc):
		return "merge_conflicts"
	case errors.Is(err, ErrBranchExists):
		return "branch_exists"
	case errors.Is(err, ErrBranchNotFound):
		return "branch_not_found"
	case errors.As(err, &ce):
		return "constraint"
	}
	return "other"
}

func scenarioRows(ctx context.Context, g *Graph, branch, typ string) (string, error) {
	snap, err := g.Resolve(ctx, Target{Branch: branch})
	if err != nil {
		return "", err
	}
	nt, err := snap.Nodes(ctx, typ)
	if err != nil {
		return "", err
	}
	var lines []string
	for i, id := range nt.IDs {
		if !nt.Alive(i) {
			continue
		}
		l := id
		for _, p := range nt.Type.Props {
			if v := nt.Value(i, p.Name); v != nil {
				l += " " + p.Name + "=" + value.FormatValue(p.Type, v)
			}
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return "(none)", nil
	}
	return strings.Join(lines, "\n"), nil
}
