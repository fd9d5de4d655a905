package server

import (
	"context"
	"testing"
)

// mutateOn runs a mutation on a branch through the API.
func (ts *testServer) mutateOn(branch, src string, params map[string]any) {
	ts.t.Helper()
	r := ts.req("POST", "/graphs/g/mutate", map[string]any{"query": src, "params": params, "branch": branch})
	if r.status != 200 {
		ts.t.Fatalf("mutate on %s: %d %s", branch, r.status, r.body)
	}
}

func TestReviewRoutes(t *testing.T) {
	ts := open(t)
	if r := ts.req("POST", "/graphs/g/branches", map[string]any{"name": "feat"}); r.status != 200 {
		t.Fatalf("create branch: %s", r.body)
	}
	ts.mutateOn("feat", addPerson, map[string]any{"name": "Eve", "age": 22})

	t.Run("diff branch to branch", func(t *testing.T) {
		var out DiffOutput
		r := ts.req("POST", "/graphs/g/diff", diffBody("main", "", "feat", 0))
		r.decode(t, &out)
		if r.status != 200 || out.Total != 1 || len(out.Changes) != 1 || out.Changes[0].ID != "Eve" ||
			out.Changes[0].Op != "insert" || out.FromCommitID != ts.head("main") || out.ToCommitID != ts.head("feat") || out.Truncated {
			t.Fatalf("diff = %d %s", r.status, r.body)
		}
	})
	t.Run("diff commit ids and limit", func(t *testing.T) {
		ts.mutateOn("feat", addPerson, map[string]any{"name": "Fay", "age": 23})
		var out DiffOutput
		r := ts.req("POST", "/graphs/g/diff", diffBody("", ts.head("main")[:10], "feat", 1))
		r.decode(t, &out)
		if r.status != 200 || out.Total != 2 || len(out.Changes) != 1 || !out.Truncated {
			t.Fatalf("diff = %d %s", r.status, r.body)
		}
	})
	t.Run("preview fast-forward", func(t *testing.T) {
		var out MergePreviewOutput
		r := ts.req("GET", "/graphs/g/branches/merge/preview?source=feat", nil)
		r.decode(t, &out)
		if r.status != 200 || out.Outcome != "fast_forward" || out.Target != "main" || len(out.Conflicts) != 0 ||
			out.TotalChanges != 2 || out.SourceHead != ts.head("feat") || out.TargetHead != ts.head("main") {
			t.Fatalf("preview = %d %s", r.status, r.body)
		}
	})
	t.Run("preview conflict writes nothing", func(t *testing.T) {
		ts.mutateOn("feat", setAge, map[string]any{"name": "Bob", "age": 26})
		ts.mutateOn("main", setAge, map[string]any{"name": "Bob", "age": 27})
		heads := [2]string{ts.head("main"), ts.head("feat")}
		var out MergePreviewOutput
		r := ts.req("GET", "/graphs/g/branches/merge/preview?source=feat&target=main", nil)
		r.decode(t, &out)
		if r.status != 200 || out.Outcome != "merged" || len(out.Conflicts) != 1 || out.Conflicts[0].Kind != "divergent_update" ||
			deref(out.Conflicts[0].EntityID) != "Bob" || out.BaseCommitID == nil {
			t.Fatalf("preview = %d %s", r.status, r.body)
		}
		if now := [2]string{ts.head("main"), ts.head("feat")}; now != heads {
			t.Fatalf("preview moved heads %v -> %v", heads, now)
		}
		m := ts.req("POST", "/graphs/g/branches/merge", map[string]any{"source": "feat"})
		if e := m.errOut(t); m.status != 409 || len(e.MergeConflicts) != len(out.Conflicts) {
			t.Fatalf("merge = %d %s", m.status, m.body)
		}
	})
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"preview needs source", "/graphs/g/branches/merge/preview", 400},
		{"preview same branch", "/graphs/g/branches/merge/preview?source=main", 400},
		{"preview unknown branch", "/graphs/g/branches/merge/preview?source=nope", 404},
		{"preview post", "/graphs/g/branches/merge/preview", 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := "GET"
			if tc.status == 405 {
				method = "POST"
			}
			if r := ts.req(method, tc.path, nil); r.status != tc.status {
				t.Fatalf("%s %s = %d %s", method, tc.path, r.status, r.body)
			}
		})
	}
}

// TestReviewRoutesAuthorize pins that both review routes ask read on
// each branch they look at.
func TestReviewRoutesAuthorize(t *testing.T) {
	rec := &recorder{deny: map[string]bool{"read@feat": true}}
	ts := start(t, Config{Tokens: []Token{{Actor: "a", Token: "t"}}, Authorizer: rec})
	if err := ts.g.CreateBranch(context.Background(), "feat", "", "a"); err != nil {
		t.Fatal(err)
	}
	if r := ts.req("GET", "/graphs/g/branches/merge/preview?source=feat", nil); r.status != 403 {
		t.Fatalf("preview = %d %s", r.status, r.body)
	}
	if r := ts.req("POST", "/graphs/g/diff", diffBody("main", "", "feat", 0)); r.status != 403 {
		t.Fatalf("diff main feat = %d %s", r.status, r.body)
	}
	if r := ts.req("POST", "/graphs/g/diff", diffBody("main", "", "main", 0)); r.status != 200 {
		t.Fatalf("diff main main = %d %s", r.status, r.body)
	}
}

// diffBody is a POST /diff body: from a branch or a snapshot revision, to a
// branch, with an optional limit.
func diffBody(fromBranch, fromSnapshot, toBranch string, limit int) map[string]any {
	from := map[string]any{"branch": fromBranch}
	if fromSnapshot != "" {
		from = map[string]any{"snapshot": fromSnapshot}
	}
	b := map[string]any{"from": from, "to": map[string]any{"branch": toBranch}}
	if limit > 0 {
		b["limit"] = limit
	}
	return b
}
