package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestPlanRenameErrors: bad @rename_from hints are typed plan errors.
func TestPlanRenameErrors(t *testing.T) {
	acc := mustCompile(t, "node A { n: String @key }\nnode B { n: String @key }\nedge E: A -> B")
	for _, c := range []struct{ desired, want string }{
		{"node X @rename_from(\"Nope\") { n: String @key }\nnode B { n: String @key }", "no accepted declaration has that name"},
		{"node X @rename_from(\"E\") { n: String @key }\nnode A { n: String @key }\nnode B { n: String @key }", "across declaration kinds"},
		{"node A { n: String @key }\nnode X @rename_from(\"A\") { n: String @key }\nnode B { n: String @key }", "already claimed"},
	} {
		_, err := PlanChange(acc, Identity{}, mustCompile(t, c.desired), PlanOptions{})
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plan %q: %v, want %q", c.desired, err, c.want)
		}
	}
}

// TestPlanIdentity: a rename keeps the type id, a re-added type gets a
// fresh one, and the identity survives its trailer encoding.
func TestPlanIdentity(t *testing.T) {
	acc := mustCompile(t, "node Person { n: String @key }")
	p, err := PlanChange(acc, Identity{}, mustCompile(t, "node Human @rename_from(\"Person\") { n: String @key }"), PlanOptions{})
	if err != nil || p.Identity.TypeID("node:Human") != "node:Person" {
		t.Fatalf("rename identity = %+v, %v", p.Identity, err)
	}
	src := JoinIdentity("node Human @rename_from(\"Person\") { n: String @key }\n", p.Identity)
	user, id, err := SplitIdentity(src)
	if err != nil || id.TypeID("node:Human") != "node:Person" || strings.Contains(user, "omnigraph:identity") {
		t.Fatalf("split = %q %+v %v", user, id, err)
	}
	mustCompile(t, src) // the trailer is a comment
	// Drop, then re-add the same name: a new id.
	p2, _ := PlanChange(mustCompile(t, user), id, mustCompile(t, "node Other { n: String @key }"), PlanOptions{})
	p3, _ := PlanChange(mustCompile(t, "node Other { n: String @key }"), p2.Identity, mustCompile(t, "node Person { n: String @key }"), PlanOptions{})
	if got := p3.Identity.TypeID("node:Person"); got != "node:Person~2" {
		t.Fatalf("re-added id = %q (identity %+v)", got, p3.Identity)
	}
}

// TestPlanKeyAddition: adding @key to an existing type is unsupported.
func TestPlanKeyAddition(t *testing.T) {
	acc := mustCompile(t, "node T { n: String }")
	p, err := PlanChange(acc, Identity{}, mustCompile(t, "node T { n: String @key }"), PlanOptions{})
	if err != nil || p.Supported || !strings.Contains(p.Steps[0].Reason, "adding @key") {
		t.Fatalf("plan = %+v %v", p, err)
	}
}

// TestPlanCarriesWarnings: a plan reports the warnings of the desired
// schema it was planned from, so callers print them without compiling the
// source a second time; they stay out of the plan's JSON.
func TestPlanCarriesWarnings(t *testing.T) {
	acc := mustCompile(t, "node P { name: String @key }")
	for _, c := range []struct {
		name, desired string
		want          []string
	}{
		{"none", "node P { name: String @key }", nil},
		{"near miss", "node P { name: String @key\n  age: I32? @idnex }", []string{"t.pg:2:13: warning: unknown annotation @idnex has no effect; did you mean @index?"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanChange(acc, Identity{}, mustCompile(t, c.desired), PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range p.Warnings {
				got = append(got, w.Error())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("warnings = %q, want %q", got, c.want)
			}
			if b, _ := json.Marshal(p); strings.Contains(string(b), "idnex") {
				t.Fatalf("warnings leak into the plan's JSON: %s", b)
			}
		})
	}
}
