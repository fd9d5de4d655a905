package query

import "testing"

func TestCmpOpFlip(t *testing.T) {
	cases := []struct {
		op   CmpOp
		want CmpOp
		ok   bool
	}{
		{OpEq, OpEq, true},
		{OpNe, OpNe, true},
		{OpLt, OpGt, true},
		{OpLe, OpGe, true},
		{OpGt, OpLt, true},
		{OpGe, OpLe, true},
		{OpContains, OpContains, false},
		{OpStartsWith, OpStartsWith, false},
	}
	for _, c := range cases {
		got, ok := c.op.Flip()
		if got != c.want || ok != c.ok {
			t.Errorf("%v.Flip() = %v, %v; want %v, %v", c.op, got, ok, c.want, c.ok)
		}
		// Flipping twice gives the operator back.
		if back, _ := got.Flip(); ok && back != c.op {
			t.Errorf("%v flipped twice = %v", c.op, back)
		}
	}
}

func TestPredConstCmp(t *testing.T) {
	prop := Operand{Kind: OpdProp, Var: "p", Prop: "age"}
	id := Operand{Kind: OpdID, Var: "p"}
	other := Operand{Kind: OpdProp, Var: "q", Prop: "age"}
	lit := Operand{Kind: OpdLit, Lit: &Lit{Kind: LitInt, Int: 5}}
	param := Operand{Kind: OpdParam, Param: "x"}
	now := Operand{Kind: OpdNow}
	cases := []struct {
		name string
		pred Pred
		v, c Operand
		op   CmpOp
		ok   bool
	}{
		{"prop op lit", Pred{Left: prop, Op: OpLt, Right: lit}, prop, lit, OpLt, true},
		{"lit op prop mirrored", Pred{Left: lit, Op: OpLt, Right: prop}, prop, lit, OpGt, true},
		{"param op id mirrored", Pred{Left: param, Op: OpGe, Right: id}, id, param, OpLe, true},
		{"prop op now", Pred{Left: prop, Op: OpLe, Right: now}, prop, now, OpLe, true},
		{"now op prop mirrored", Pred{Left: now, Op: OpGt, Right: prop}, prop, now, OpLt, true},
		{"both constant", Pred{Left: lit, Op: OpEq, Right: param}, param, lit, OpEq, true},
		{"prop op prop", Pred{Left: prop, Op: OpEq, Right: other}, prop, other, OpEq, false},
		{"lit contains prop has no mirror", Pred{Left: lit, Op: OpContains, Right: prop}, lit, prop, OpContains, false},
		{"text predicate", Pred{Left: prop, Right: lit, Func: "search"}, Operand{}, Operand{}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, k, op, ok := c.pred.ConstCmp()
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if v.String() != c.v.String() || k.String() != c.c.String() || op != c.op {
				t.Fatalf("got %s %v %s, want %s %v %s", v, op, k, c.v, c.op, c.c)
			}
		})
	}
}
