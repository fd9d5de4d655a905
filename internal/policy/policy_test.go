package policy

import (
	"errors"
	"strings"
	"testing"
)

const basePolicy = `version: 1
groups:
  admins: [act-andrew]
  readers: [act-reader, act-analyst]
protected_branches: [main]
rules:
  - id: read-data
    allow:
      actors: { group: readers }
      actions: [read, export]
      branch_scope: any
  - id: admin-schema
    allow:
      actors: { group: admins }
      actions: [schema_apply, branch_merge]
      target_branch_scope: protected
`

// graphBundle parses src as the policy file name and compiles it for
// graphID, failing tb on either error.
func graphBundle(tb testing.TB, name, src, graphID string) *Bundle {
	tb.Helper()
	f, err := Parse(name, []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := CompileGraph(name, f, graphID)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"empty", ``, "empty"},
		{"unknown top-level field", "version: 1\nextra: 1\n", "field extra not found"},
		{"unknown rule field", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    deny: {}\n", "field deny not found"},
		{"unknown allow field", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [read], when: x}\n", "field when not found"},
		{"unknown actors field", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a, actor: x}, actions: [read]}\n", "field actor not found"},
		{"duplicate key", "version: 1\nversion: 1\n", "already defined"},
		{"wrong version", "version: 2\n", "version: must be 1"},
		{"missing version", "groups: {a: [x]}\n", "version: must be 1"},
		{"empty group", "version: 1\ngroups: {a: []}\n", "at least one actor"},
		{"blank actor", "version: 1\ngroups: {a: ['']}\n", "must not be blank"},
		{"blank rule id", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: ' '\n    allow: {actors: {group: a}, actions: [read]}\n", "non-blank id"},
		{"duplicate rule id", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [read]}\n  - id: r\n    allow: {actors: {group: a}, actions: [export]}\n", `line 6: rules[1].id: duplicate rule id "r"`},
		{"undeclared group", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: b}, actions: [read]}\n", `group "b" is not declared`},
		{"no actions", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: []}\n", "at least one action"},
		{"unknown action", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [write]}\n", `unknown action "write"`},
		{"branch scope on target action", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [branch_merge], branch_scope: any}\n", "branch_scope applies only to read"},
		{"target scope on read", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [read], target_branch_scope: any}\n", "target_branch_scope applies only"},
		{"scope on invoke_query", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [invoke_query], branch_scope: protected}\n", "branch_scope applies only"},
		{"both scopes", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [read], branch_scope: any, target_branch_scope: any}\n", "at most one"},
		{"bad scope", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [read], branch_scope: sometimes}\n", `unknown scope "sometimes"`},
		{"graph_list mixed in rule", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [graph_list, read]}\n", "cannot be mixed"},
		{"mixed bundle", "version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [graph_list]}\n  - id: s\n    allow: {actors: {group: a}, actions: [read]}\n", "either graph-scoped or server-scoped"},
		{"two documents", "version: 1\n---\nversion: 1\n", "more than one YAML document"},
		{"wrong type", "version: one\n", "cannot unmarshal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.src)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestCompileCedarText(t *testing.T) {
	f, err := Parse("base.policy.yaml", []byte(basePolicy))
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind() != KindGraph {
		t.Fatalf("kind %v", f.Kind())
	}
	b, err := CompileGraph("base", f, "knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if b.PolicyCount() != 4 {
		t.Errorf("policies %d, want 4 (one per rule and action)", b.PolicyCount())
	}
	want := `// read-data:read
permit (
    principal in Omnigraph::Group::"readers",
    action == Omnigraph::Action::"read",
    resource == Omnigraph::Graph::"knowledge"
)
when { true };

// read-data:export
permit (
    principal in Omnigraph::Group::"readers",
    action == Omnigraph::Action::"export",
    resource == Omnigraph::Graph::"knowledge"
)
when { true };

// admin-schema:schema_apply
permit (
    principal in Omnigraph::Group::"admins",
    action == Omnigraph::Action::"schema_apply",
    resource == Omnigraph::Graph::"knowledge"
)
when { context.has_target_branch && context.target_branch_is_protected };

// admin-schema:branch_merge
permit (
    principal in Omnigraph::Group::"admins",
    action == Omnigraph::Action::"branch_merge",
    resource == Omnigraph::Graph::"knowledge"
)
when { context.has_target_branch && context.target_branch_is_protected };

`
	if got := string(b.Cedar()); got != want {
		t.Errorf("cedar text:\n%s\nwant:\n%s", got, want)
	}
	if _, err := CompileServer("base", f); err == nil {
		t.Error("a graph-scoped bundle compiled for the server")
	}
	if got := strings.Join(f.Actors(), ","); got != "act-analyst,act-andrew,act-reader" {
		t.Errorf("actors %s", got)
	}
}

func TestDecideBasics(t *testing.T) {
	b := graphBundle(t, "base", basePolicy, "knowledge")
	cases := []struct {
		name   string
		req    Request
		allow  bool
		rule   string
		reason string
	}{
		{"reader reads main", Request{Actor: "act-reader", Action: Read, Branch: "main"}, true, "read-data", ""},
		{"reader reads without branch", Request{Actor: "act-reader", Action: Read}, true, "read-data", ""},
		{"reader cannot change", Request{Actor: "act-reader", Action: Change, Branch: "main"}, false, "", "action 'change' on branch 'main' (target branch none) is not permitted for actor 'act-reader'"},
		{"unknown actor", Request{Actor: "act-mallory", Action: Read, Branch: "main"}, false, "", "unknown actor"},
		{"admin merges into main", Request{Actor: "act-andrew", Action: BranchMerge, Branch: "dev", TargetBranch: "main"}, true, "admin-schema", ""},
		{"admin merges into dev", Request{Actor: "act-andrew", Action: BranchMerge, Branch: "main", TargetBranch: "dev"}, false, "", "target branch 'dev'"},
		{"admin cannot read", Request{Actor: "act-andrew", Action: Read, Branch: "main"}, false, "", "denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := b.Decide(c.req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != c.allow || d.RuleID != c.rule || !strings.Contains(d.Reason, c.reason) {
				t.Errorf("decision %+v, want allowed=%v rule=%q reason~%q", d, c.allow, c.rule, c.reason)
			}
		})
	}
	if _, err := b.Decide(Request{Actor: "act-reader", Action: "write"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown action: %v", err)
	}
}

// TestMatchedRuleIsSmallestID: when several rules permit a request the
// decision names the smallest rule id.
func TestMatchedRuleIsSmallestID(t *testing.T) {
	src := `version: 1
groups: {g: [a], h: [a]}
rules:
  - id: zeta
    allow: {actors: {group: g}, actions: [read]}
  - id: alpha
    allow: {actors: {group: h}, actions: [read], branch_scope: any}
  - id: mid
    allow: {actors: {group: g}, actions: [read, export]}
`
	b := graphBundle(t, "p", src, "g1")
	d, err := b.Decide(Request{Actor: "a", Action: Read, Branch: "x"})
	if err != nil || !d.Allowed || d.RuleID != "alpha" {
		t.Fatalf("decision %+v %v, want alpha", d, err)
	}
	d, _ = b.Decide(Request{Actor: "a", Action: Export})
	if d.RuleID != "mid" {
		t.Fatalf("export rule %q, want mid", d.RuleID)
	}
}

func TestServerBundle(t *testing.T) {
	src := `version: 1
groups: {ops: [act-ops], devs: [act-dev]}
rules:
  - id: list-graphs
    allow: {actors: {group: ops}, actions: [graph_list]}
`
	f, err := Parse("server", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CompileGraph("server", f, "knowledge"); err == nil {
		t.Fatal("server bundle bound to a graph")
	}
	b, err := CompileServer("server", f)
	if err != nil {
		t.Fatal(err)
	}
	if b.Resource() != `Omnigraph::Server::"root"` {
		t.Errorf("resource %s", b.Resource())
	}
	for actor, want := range map[string]bool{"act-ops": true, "act-dev": false, "nobody": false} {
		d, err := b.Decide(Request{Actor: actor, Action: GraphList})
		if err != nil || d.Allowed != want {
			t.Errorf("%s graph_list: %+v %v, want %v", actor, d, err, want)
		}
	}
}

func TestParseTests(t *testing.T) {
	good := "version: 1\ncases:\n  - {id: a, actor: x, action: read, branch: main, expect: allow}\n"
	if _, err := ParseTests("t", []byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"duplicate id":  "version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: allow}\n  - {id: a, actor: x, action: read, expect: deny}\n",
		"bad expect":    "version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: maybe}\n",
		"bad action":    "version: 1\ncases:\n  - {id: a, actor: x, action: write, expect: allow}\n",
		"unknown field": "version: 1\ncases:\n  - {id: a, actor: x, action: read, expect: allow, note: x}\n",
		"no actor":      "version: 1\ncases:\n  - {id: a, action: read, expect: allow}\n",
	} {
		if _, err := ParseTests("t", []byte(src)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
