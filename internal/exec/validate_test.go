package exec

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// world is the committed state most validation cases start from:
// Persons Alice (email a@x) and Bob, Company Acme, Doc d1, Pair Smith/John,
// Knows k1 Alice->Bob, WorksAt w1 Alice->Acme, Wrote r1 Alice->d1.
func valWorld() *MemState {
	m := NewMemState()
	m.PutNode("Person", Row{ID: "Alice", Values: map[string]any{"name": "Alice", "email": "a@x"}})
	m.PutNode("Person", Row{ID: "Bob", Values: map[string]any{"name": "Bob"}})
	m.PutNode("Company", Row{ID: "Acme", Values: map[string]any{"name": "Acme"}})
	m.PutNode("Company", Row{ID: "Globex", Values: map[string]any{"name": "Globex"}})
	m.PutNode("Doc", Row{ID: "d1", Values: map[string]any{"title": "one", "slug": "one"}})
	m.PutNode("Pair", Row{ID: `["John","Smith"]`, Values: map[string]any{"first": "John", "last": "Smith", "born": int32(100)}})
	m.PutEdge("Knows", Row{ID: "k1", Src: "Alice", Dst: "Bob"})
	m.PutEdge("WorksAt", Row{ID: "w1", Src: "Alice", Dst: "Acme"})
	m.PutEdge("Wrote", Row{ID: "r1", Src: "Alice", Dst: "d1"})
	return m
}

func valPerson(id string, kv ...any) Row {
	vals := map[string]any{"name": id}
	for i := 0; i+1 < len(kv); i += 2 {
		vals[kv[i].(string)] = kv[i+1]
	}
	return Row{ID: id, Values: vals}
}

func valEdge(id, src, dst string) Row {
	return Row{ID: id, Src: src, Dst: dst, Values: map[string]any{}}
}

func TestValidate(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	_ = f
	tests := []struct {
		name  string
		delta func(d *Delta)
		kind  ConstraintKind // 0 with msg "" = valid
		msg   string
	}{
		// Per-row constraints.
		{"required", func(d *Delta) {
			d.Node("Doc").Upserts = []Row{{ID: "d2", Values: map[string]any{"title": nil}}}
		}, ConstraintRequired, "non-nullable property 'title' has null or invalid values"},
		{"enum ok", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "role", "guest")} }, 0, ""},
		{"enum bad", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "role", "root")} },
			ConstraintEnum, "invalid enum value 'root' for Person.role (expected: admin, guest, user)"},
		{"range at bounds", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy", "age", int64(0)), valPerson("Di", "age", int64(150))}
		}, 0, ""},
		{"range below min", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "age", int64(-1))} },
			ConstraintRange, "@range violation on Person.age: value -1 < min 0"},
		{"range above max", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "age", int64(300))} },
			ConstraintRange, "@range violation on Person.age: value 300 > max 150"},
		{"range upper-only is a max", func(d *Delta) {
			d.Node("Company").Upserts = []Row{{ID: "X", Values: map[string]any{"name": "X", "rating": 5.5}}}
		}, ConstraintRange, "@range violation on Company.rating: value 5.5 > max 5"},
		{"range upper-only allows low values", func(d *Delta) {
			d.Node("Company").Upserts = []Row{{ID: "X", Values: map[string]any{"name": "X", "rating": -100.0}}}
		}, 0, ""},
		{"range NaN", func(d *Delta) {
			d.Node("Company").Upserts = []Row{{ID: "X", Values: map[string]any{"name": "X", "rating": math.NaN()}}}
		}, ConstraintRange, "@range violation on Company.rating: value is NaN"},
		{"check unanchored end", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "handle", "abc123")} }, 0, ""},
		{"check fails", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "handle", "1abc")} },
			ConstraintCheck, "@check violation on Person.handle: value '1abc' does not match pattern '^[a-z]+'"},

		// Uniqueness.
		{"unique within batch", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "c@x"), valPerson("Di", "email", "c@x")}
		}, ConstraintUnique, "@unique violation on Person.email: value 'c@x' held by 'Cy' and 'Di'"},
		{"unique against committed", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "a@x")} },
			ConstraintUnique, "@unique violation on Person.email: value 'a@x' held by 'Alice' and 'Cy'"},
		{"same id keeps its value", func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Alice", "email", "a@x")} }, 0, ""},
		{"value freed by update is reusable", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Alice", "email", "new@x"), valPerson("Cy", "email", "a@x")}
		}, 0, ""},
		{"value freed by delete is reusable", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "a@x")}
			d.Node("Person").Deletes = []string{"Alice"}
			d.Edge("Knows").Deletes = []string{"k1"}
			d.Edge("WorksAt").Deletes = []string{"w1"}
			d.Edge("Wrote").Deletes = []string{"r1"}
		}, 0, ""},
		{"nulls exempt", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy"), valPerson("Di", "email", nil)}
		}, 0, ""},
		{"replace ignores committed holders", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Alice"), valPerson("Bob", "email", "a@x")}
			d.Node("Person").Replace = true
		}, 0, ""},
		{"composite unique", func(d *Delta) {
			d.Node("Pair").Upserts = []Row{{ID: `["Jane","Smith"]`, Values: map[string]any{"first": "Jane", "last": "Smith", "born": int32(100)}}}
		}, ConstraintUnique, `@unique violation on Pair.(last, born): value '(Smith, 1970-04-11)' held by '["John","Smith"]' and '["Jane","Smith"]'`},
		{"composite unique differs in one jsonMember", func(d *Delta) {
			d.Node("Pair").Upserts = []Row{{ID: `["Jane","Smith"]`, Values: map[string]any{"first": "Jane", "last": "Smith", "born": int32(101)}}}
		}, 0, ""},
		{"composite unique null jsonMember exempt", func(d *Delta) {
			d.Node("Pair").Upserts = []Row{
				{ID: `["A","Smith"]`, Values: map[string]any{"first": "A", "last": "Smith"}},
				{ID: `["B","Smith"]`, Values: map[string]any{"first": "B", "last": "Smith"}},
			}
		}, 0, ""},
		{"edge unique src dst", func(d *Delta) { d.Edge("Knows").Upserts = []Row{valEdge("k2", "Alice", "Bob")} },
			ConstraintUnique, "@unique violation on Knows.(src, dst): value '(Alice, Bob)' held by 'k1' and 'k2'"},
		{"edge unique reverse direction ok", func(d *Delta) { d.Edge("Knows").Upserts = []Row{valEdge("k2", "Bob", "Alice")} }, 0, ""},
		{"edge unique no separator forgery", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("a|b"), valPerson("c"), valPerson("a"), valPerson("b|c")}
			d.Edge("Knows").Upserts = []Row{valEdge("k2", "a|b", "c"), valEdge("k3", "a", "b|c")}
		}, 0, ""},

		// Strict insert.
		{"strict insert new ids", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy")}
			d.Node("Person").StrictInsert = true
		}, 0, ""},

		// Referential integrity.
		{"edge to staged node", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy")}
			d.Edge("Knows").Upserts = []Row{valEdge("k2", "Cy", "Alice")}
		}, 0, ""},
		{"src missing", func(d *Delta) { d.Edge("Knows").Upserts = []Row{valEdge("k2", "Ghost", "Alice")} },
			ConstraintReference, "src 'Ghost' not found in Person"},
		{"dst missing", func(d *Delta) { d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Bob", "Nope")} },
			ConstraintReference, "dst 'Nope' not found in Company"},
		{"dst is wrong type", func(d *Delta) { d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Bob", "Alice")} },
			ConstraintReference, "dst 'Alice' not found in Company"},
		{"edge to node deleted in same change", func(d *Delta) {
			d.Node("Person").Deletes = []string{"Bob"}
			d.Edge("Knows").Deletes = []string{"k1"}
			d.Edge("Knows").Upserts = []Row{valEdge("k2", "Alice", "Bob")}
		}, ConstraintReference, "dst 'Bob' not found in Person"},
		{"overwrite orphans retained edge", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Alice")}
			d.Node("Person").Deletes = []string{"Bob"}
			d.Node("Person").Replace = true
		}, ConstraintReference, "dst 'Bob' not found in Person"},
		{"overwrite with edges overwritten too", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Alice")}
			d.Node("Person").Deletes = []string{"Bob"}
			d.Node("Person").Replace = true
			d.Edge("Knows").Replace = true
		}, 0, ""},
		{"overwrite keeps node re-staged", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Alice"), valPerson("Bob")}
			d.Node("Person").Replace = true
		}, 0, ""},
		{"replaced node type hides committed nodes", func(d *Delta) {
			d.Node("Company").Upserts = []Row{{ID: "Initech", Values: map[string]any{"name": "Initech"}}}
			d.Node("Company").Replace = true
			d.Node("Company").Deletes = []string{"Globex"}
			d.Edge("WorksAt").Upserts = []Row{valEdge("w1", "Alice", "Initech"), valEdge("w2", "Bob", "Globex")}
		}, ConstraintReference, "dst 'Globex' not found in Company"},
		{"delete with cascaded edges", func(d *Delta) {
			d.Node("Person").Deletes = []string{"Bob"}
			d.Edge("Knows").Deletes = []string{"k1"}
		}, 0, ""},
		{"edge moved away from deleted node", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy")}
			d.Node("Person").Deletes = []string{"Bob"}
			d.Edge("Knows").Upserts = []Row{valEdge("k1", "Alice", "Cy")}
		}, 0, ""},

		// Cardinality.
		{"card max", func(d *Delta) { d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Alice", "Globex")} },
			ConstraintCard, "@card violation on edge WorksAt: source 'Alice' has 2 edges (max 1)"},
		{"card move counts once", func(d *Delta) { d.Edge("WorksAt").Upserts = []Row{valEdge("w1", "Alice", "Globex")} }, 0, ""},
		{"card replace edge", func(d *Delta) {
			d.Edge("WorksAt").Deletes = []string{"w1"}
			d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Alice", "Globex")}
		}, 0, ""},
		{"card max within batch", func(d *Delta) {
			d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Bob", "Acme"), valEdge("w3", "Bob", "Globex")}
		}, ConstraintCard, "@card violation on edge WorksAt: source 'Bob' has 2 edges (max 1)"},
		{"card min on vacated source", func(d *Delta) { d.Edge("Wrote").Deletes = []string{"r1"} },
			ConstraintCard, "@card violation on edge Wrote: source 'Alice' has 0 edges (min 1)"},
		{"card min on source moved away", func(d *Delta) { d.Edge("Wrote").Upserts = []Row{valEdge("r1", "Bob", "d1")} },
			ConstraintCard, "@card violation on edge Wrote: source 'Alice' has 0 edges (min 1)"},
		{"card min untouched source not checked", func(d *Delta) {
			d.Edge("Wrote").Upserts = []Row{valEdge("r2", "Alice", "d1")}
		}, 0, ""},
		{"card wrote max 2", func(d *Delta) {
			d.Edge("Wrote").Upserts = []Row{valEdge("r2", "Alice", "d1"), valEdge("r3", "Alice", "d1")}
		}, ConstraintCard, "@card violation on edge Wrote: source 'Alice' has 3 edges (max 2)"},
		{"card vacated by overwrite", func(d *Delta) {
			d.Edge("Wrote").Replace = true
			d.Edge("Wrote").Vacated = []string{"Alice"}
		}, ConstraintCard, "@card violation on edge Wrote: source 'Alice' has 0 edges (min 1)"},
		{"card overwrite counts only new image", func(d *Delta) {
			d.Edge("WorksAt").Replace = true
			d.Edge("WorksAt").Upserts = []Row{valEdge("w9", "Alice", "Globex")}
		}, 0, ""},

		// Order: row constraints are reported before uniqueness, RI and card.
		{"first violation by kind", func(d *Delta) {
			d.Edge("WorksAt").Upserts = []Row{valEdge("w2", "Ghost", "Acme")}
			d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "a@x"), valPerson("Di", "age", int64(999))}
		}, ConstraintRange, "@range violation on Person.age: value 999 > max 150"},
	}
	cat := testCatalog(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDelta()
			tc.delta(d)
			err := Validate(context.Background(), cat, valWorld(), d)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ce *ConstraintError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want *ConstraintError %q", err, tc.msg)
			}
			if ce.Kind != tc.kind || ce.Error() != tc.msg {
				t.Fatalf("got %s %q\nwant %s %q", ce.Kind, ce.Error(), tc.kind, tc.msg)
			}
		})
	}
}

func TestValidateKeyConflicts(t *testing.T) {
	cat := testCatalog(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		delta func(d *Delta)
		want  KeyConflictError
	}{
		{"append existing node", func(d *Delta) {
			d.Node("Person").Upserts = []Row{valPerson("Cy"), valPerson("Alice")}
			d.Node("Person").StrictInsert = true
		}, KeyConflictError{TypeKey: "node:Person", EntityID: "Alice"}},
		{"append existing edge", func(d *Delta) {
			d.Edge("Knows").Upserts = []Row{valEdge("k1", "Bob", "Alice")}
			d.Edge("Knows").StrictInsert = true
		}, KeyConflictError{TypeKey: "edge:Knows", EntityID: "k1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDelta()
			tc.delta(d)
			err := Validate(ctx, cat, valWorld(), d)
			var kc *KeyConflictError
			if !errors.As(err, &kc) || *kc != tc.want {
				t.Fatalf("got %v, want %+v", err, tc.want)
			}
		})
	}
}

func TestDeltaDupPolicies(t *testing.T) {
	cat := testCatalog(t)
	personT, _ := cat.Node("Person")
	docT, _ := cat.Node("Doc")
	pairT, _ := cat.Node("Pair")
	knowsT, _ := cat.Edge("Knows")

	d := NewDelta()
	if err := d.PutNode(personT, valPerson("Alice", "age", int64(1)), DupReject); err != nil {
		t.Fatal(err)
	}
	err := d.PutNode(personT, valPerson("Alice", "age", int64(2)), DupReject)
	var ce *ConstraintError
	if !errors.As(err, &ce) || ce.Error() != "@unique violation on Person.name: value 'Alice' held by 'Alice' and 'Alice'" {
		t.Fatalf("keyed duplicate: %v", err)
	}
	pair := Row{ID: `["John","Smith"]`, Values: map[string]any{"first": "John", "last": "Smith"}}
	_ = d.PutNode(pairT, pair, DupReject)
	err = d.PutNode(pairT, pair, DupReject)
	if !errors.As(err, &ce) || ce.Error() != `@unique violation on Pair.(first, last): value '(John, Smith)' held by '["John","Smith"]' and '["John","Smith"]'` {
		t.Fatalf("composite keyed duplicate: %v", err)
	}

	_ = d.PutNode(docT, Row{ID: "d9", Values: map[string]any{"title": "a"}}, DupReject)
	err = d.PutNode(docT, Row{ID: "d9", Values: map[string]any{"title": "b"}}, DupReject)
	var kc *KeyConflictError
	if !errors.As(err, &kc) || *kc != (KeyConflictError{TypeKey: "node:Doc", EntityID: "d9"}) {
		t.Fatalf("unkeyed duplicate: %v", err)
	}
	_ = d.PutEdge(knowsT, valEdge("e1", "Alice", "Bob"), DupReject)
	if err := d.PutEdge(knowsT, valEdge("e1", "Alice", "Bob"), DupReject); !errors.As(err, &kc) || kc.TypeKey != "edge:Knows" {
		t.Fatalf("edge duplicate: %v", err)
	}

	// DupReplace: last write wins, in the first occurrence's position.
	if err := d.PutNode(personT, valPerson("Alice", "age", int64(3)), DupReplace); err != nil {
		t.Fatal(err)
	}
	if err := d.PutEdge(knowsT, valEdge("e1", "Alice", "Carol"), DupReplace); err != nil {
		t.Fatal(err)
	}
	if got := d.Node("Person").Upserts; len(got) != 1 || got[0].Values["age"] != int64(3) {
		t.Fatalf("person upserts %+v", got)
	}
	if got := d.Edge("Knows").Upserts; len(got) != 1 || got[0].Dst != "Carol" {
		t.Fatalf("edge upserts %+v", got)
	}
}

// Duplicate explicit edge ids in a merge load: last occurrence wins and the
// edge counts once for @card.
func TestValidateCardLastWriteWins(t *testing.T) {
	cat := testCatalog(t)
	worksAt, _ := cat.Edge("WorksAt")
	d := NewDelta()
	for _, dst := range []string{"Acme", "Globex"} {
		if err := d.PutEdge(worksAt, valEdge("w7", "Bob", dst), DupReplace); err != nil {
			t.Fatal(err)
		}
	}
	if err := Validate(context.Background(), cat, valWorld(), d); err != nil {
		t.Fatal(err)
	}
}

func TestValidateUnknownDeltaType(t *testing.T) {
	cat := testCatalog(t)
	for _, tc := range []func(*Delta){
		func(d *Delta) { d.Node("Ghost") },
		func(d *Delta) { d.Edge("knows") }, // must be the canonical name
	} {
		d := NewDelta()
		tc(d)
		if err := Validate(context.Background(), cat, valWorld(), d); err == nil {
			t.Error("want error for unknown delta type")
		}
	}
}

func TestValidateApplyRoundTrip(t *testing.T) {
	// Validate then Apply then Validate an empty delta: MemState applies the
	// same image semantics Validate assumed.
	cat := testCatalog(t)
	ctx := context.Background()
	m := valWorld()
	d := NewDelta()
	d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "a@x"), valPerson("Alice", "email", "z@x")}
	d.Edge("WorksAt").Upserts = []Row{valEdge("w1", "Cy", "Globex")}
	if err := Validate(ctx, cat, m, d); err != nil {
		t.Fatal(err)
	}
	m.Apply(d)
	ids, _ := m.LookupUnique(ctx, "node:Person", []string{"email"}, []any{"a@x"})
	if len(ids) != 1 || ids[0] != "Cy" {
		t.Fatalf("email a@x held by %v", ids)
	}
	if src, _, ok, _ := m.EdgeEnds(ctx, "WorksAt", "w1"); !ok || src != "Cy" {
		t.Fatalf("w1 src %q", src)
	}
	// A second writer now taking a@x collides with the committed Cy.
	d2 := NewDelta()
	d2.Node("Person").Upserts = []Row{valPerson("Di", "email", "a@x")}
	var ce *ConstraintError
	if err := Validate(ctx, cat, m, d2); !errors.As(err, &ce) || ce.Kind != ConstraintUnique {
		t.Fatalf("got %v", err)
	}
}

// errCommitted fails every lookup, to show committed errors propagate.
type errCommitted struct{ err error }

func (e errCommitted) NodeExists(context.Context, string, string) (bool, error) { return false, e.err }
func (e errCommitted) LookupUnique(context.Context, string, []string, []any) ([]string, error) {
	return nil, e.err
}
func (e errCommitted) EdgeIDs(context.Context, string, snapshot.Endpoint, string) ([]string, error) {
	return nil, e.err
}
func (e errCommitted) EdgeEnds(context.Context, string, string) (string, string, bool, error) {
	return "", "", false, e.err
}

func TestValidatePropagatesCommittedErrors(t *testing.T) {
	cat := testCatalog(t)
	boom := errors.New("storage down")
	for name, fill := range map[string]func(*Delta){
		"unique": func(d *Delta) { d.Node("Person").Upserts = []Row{valPerson("Cy", "email", "c@x")} },
		"ref":    func(d *Delta) { d.Edge("Knows").Upserts = []Row{valEdge("k9", "Alice", "Bob")} },
		"card":   func(d *Delta) { d.Edge("WorksAt").Deletes = []string{"w1"} },
		"strict": func(d *Delta) {
			d.Node("Doc").StrictInsert = true
			d.Node("Doc").Upserts = []Row{{ID: "x", Values: map[string]any{"title": "t"}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := NewDelta()
			fill(d)
			if err := Validate(context.Background(), cat, errCommitted{boom}, d); !errors.Is(err, boom) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestCheckRowsDirect(t *testing.T) {
	cat := testCatalog(t)
	knows, _ := cat.Edge("Knows")
	if err := CheckEdgeRow(knows, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	nt := &schema.NodeType{Name: "T", Props: []*schema.Property{{Name: "p", Type: schema.Type{Kind: schema.KindU64}}},
		Ranges: []schema.RangeConstraint{{Prop: "p", Max: f64ptr(200)}}}
	err := CheckNodeRow(nt, map[string]any{"p": uint64(300)})
	if err == nil || err.Error() != "@range violation on T.p: value 300 > max 200" {
		t.Fatalf("got %v", err)
	}
	// Exact comparison: a U64 just above a float bound is not rounded down to it.
	nt.Ranges[0].Max = f64ptr(9007199254740992)
	if err := CheckNodeRow(nt, map[string]any{"p": uint64(9007199254740993)}); err == nil {
		t.Fatal("2^53+1 must exceed max 2^53")
	}
}

func f64ptr(f float64) *float64 { return &f }

func TestCheckRangeF32Width(t *testing.T) {
	nt := &schema.NodeType{Name: "T", Props: []*schema.Property{{Name: "p", Type: schema.Type{Kind: schema.KindF32}}},
		Ranges: []schema.RangeConstraint{{Prop: "p", Min: f64ptr(5.1), Max: f64ptr(7.3)}}}
	for _, ok := range []float64{5.1, 7.3, 6} {
		if err := CheckNodeRow(nt, map[string]any{"p": float64(float32(ok))}); err != nil {
			t.Errorf("F32 %v: %v", ok, err)
		}
	}
	err := CheckNodeRow(nt, map[string]any{"p": float64(float32(7.4))})
	if err == nil || err.Error() != "@range violation on T.p: value 7.4 > max 7.3" {
		t.Fatalf("got %v", err)
	}
}
