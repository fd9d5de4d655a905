package query

// AST of a .gq file. Every node records the byte span it was parsed from.
// Variable names are stored without the leading '$'; "_" is the anonymous
// variable.

// Ast is a parsed (not yet checked) .gq file.
type Ast struct {
	Filename string
	Src      string
	Queries  []*QueryDecl
}

// QueryDecl is one `query name(params) { … }` declaration.
type QueryDecl struct {
	Name        string
	NameSpan    Span
	Params      []*Param
	Description string
	Instruction string
	// Read body (empty for mutations).
	Match  []Clause
	Return []*Projection
	Order  []*Ordering
	Limit  *LimitClause
	// Mutation body (empty for reads).
	Mutations []Mutation
	Span      Span
}

// IsMutation reports whether the query body is a list of mutation statements.
func (q *QueryDecl) IsMutation() bool { return len(q.Mutations) > 0 }

// Param is a declared parameter `$name: Type`.
type Param struct {
	Name string
	Type ParamType
	Span Span
}

// ParamType is the written parameter type: a base type name, `[Base]` or
// `Vector(N)`, optionally nullable.
type ParamType struct {
	Base     string // base type name, or "Vector"
	List     bool
	Dim      int64 // Vector dimension
	Nullable bool
	Span     Span
}

// String renders the type as written.
func (t ParamType) String() string {
	s := t.Base
	if t.Base == "Vector" {
		s = "Vector(" + itoa(t.Dim) + ")"
	}
	if t.List {
		s = "[" + s + "]"
	}
	if t.Nullable {
		s += "?"
	}
	return s
}

// Var is a variable occurrence.
type Var struct {
	Name string
	Span Span
}

// Anonymous reports whether this is `$_`.
func (v Var) Anonymous() bool { return v.Name == "_" }

// Clause is one match clause: *Binding, *Traversal, *FilterClause, *TextSearch or
// *Negation.
type Clause interface {
	clauseSpan() Span
}

// Binding is `$v: Type { prop: value, … }`.
type Binding struct {
	Var      Var
	Type     string
	TypeSpan Span
	Props    []*PropMatch
	Span     Span
}

// PropMatch is one inline `prop: value` equality (membership for lists).
type PropMatch struct {
	Name     string
	NameSpan Span
	Value    Expr
	Span     Span
}

// Traversal is `$a [$w:] edge|<edge> [{min,max}] $b`.
type Traversal struct {
	Src        Var
	EdgeVar    *Var
	Edge       string
	EdgeSpan   Span
	Undirected bool
	Bounds     *Bounds
	Dst        Var
	Span       Span
}

// Bounds are the hop bounds `{min,max}`; `{min,}` sets Unbounded.
type Bounds struct {
	Min, Max  int64
	Unbounded bool
	Span      Span
}

// FilterClause is `left op right`.
type FilterClause struct {
	Left  Expr
	Op    CmpOp
	Right Expr
	Span  Span
}

// TextSearch is a search/fuzzy/match_text call used as a clause.
type TextSearch struct {
	Call *Call
}

// Negation is `not { clauses }`.
type Negation struct {
	Clauses []Clause
	Span    Span
}

func (c *Binding) clauseSpan() Span      { return c.Span }
func (c *Traversal) clauseSpan() Span    { return c.Span }
func (c *FilterClause) clauseSpan() Span { return c.Span }
func (c *TextSearch) clauseSpan() Span   { return c.Call.Span }
func (c *Negation) clauseSpan() Span     { return c.Span }

// CmpOp is a comparison or filter operator.
type CmpOp uint8

// Holds reports whether a comparison result c (negative, zero or positive,
// as cmp.Compare returns) satisfies op; false for the non-ordering
// operators (contains, starts_with).
func (op CmpOp) Holds(c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	return false
}

// Flip mirrors a comparison for swapped operands (c < x ⇔ x > c); ok is
// false for the operators that have no mirror (contains, starts_with).
func (op CmpOp) Flip() (CmpOp, bool) {
	switch op {
	case OpEq, OpNe:
		return op, true
	case OpLt:
		return OpGt, true
	case OpLe:
		return OpGe, true
	case OpGt:
		return OpLt, true
	case OpGe:
		return OpLe, true
	}
	return op, false
}

// Operators, in the order filter_op lists them.
const (
	OpEq CmpOp = iota + 1
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpContains
	OpStartsWith
)

var opNames = [...]string{OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpContains: "contains", OpStartsWith: "starts_with"}

func (o CmpOp) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "?"
}

// Expr is an expression: *VarRef, *PropRef, *Lit, *Now, *Call or *AliasRef.
type Expr interface {
	exprSpan() Span
}

// VarRef is a bare variable `$v` (node variable or parameter).
type VarRef struct{ Var Var }

// PropRef is `$v.prop`.
type PropRef struct {
	Var      Var
	Prop     string
	PropSpan Span
	Span     Span
}

// LitKind classifies literals.
type LitKind uint8

// Literal kinds.
const (
	LitString LitKind = iota + 1
	LitInt
	LitFloat
	LitBool
	LitDate     // date("…"), Str holds the text
	LitDateTime // datetime("…"), Str holds the text
	LitList
)

// Lit is a literal value.
type Lit struct {
	Kind  LitKind
	Str   string
	Int   int64
	Float float64
	Bool  bool
	Elems []*Lit
	Span  Span
}

// Now is `now()`.
type Now struct{ Span Span }

// Call is a function call: nearest, search, fuzzy, match_text, bm25, rrf,
// count, sum, avg, min, max.
type Call struct {
	Func     string
	FuncSpan Span
	Args     []Expr
	Span     Span
}

// AliasRef is a bare identifier, referring to a projection alias.
type AliasRef struct {
	Name string
	Span Span
}

func (e *VarRef) exprSpan() Span   { return e.Var.Span }
func (e *PropRef) exprSpan() Span  { return e.Span }
func (e *Lit) exprSpan() Span      { return e.Span }
func (e *Now) exprSpan() Span      { return e.Span }
func (e *Call) exprSpan() Span     { return e.Span }
func (e *AliasRef) exprSpan() Span { return e.Span }

// Projection is one `expr [as alias]` item of return.
type Projection struct {
	Expr  Expr
	Alias string
	Span  Span
}

// Ordering is one order key.
type Ordering struct {
	Expr Expr
	Desc bool
	Span Span
}

// LimitClause is `limit N`.
type LimitClause struct {
	N    int64
	Span Span
}

// Mutation is *Insert, *Update or *Delete.
type Mutation interface {
	mutationSpan() Span
}

// Insert is `insert Type { assigns }`.
type Insert struct {
	Type     string
	TypeSpan Span
	Assigns  []*Assign
	Span     Span
}

// Update is `update Type set { assigns } where pred`.
type Update struct {
	Type     string
	TypeSpan Span
	Assigns  []*Assign
	Where    *Where
	Span     Span
}

// Delete is `delete Type where pred`.
type Delete struct {
	Type     string
	TypeSpan Span
	Where    *Where
	Span     Span
}

func (m *Insert) mutationSpan() Span { return m.Span }
func (m *Update) mutationSpan() Span { return m.Span }
func (m *Delete) mutationSpan() Span { return m.Span }

// Assign is `prop: value`.
type Assign struct {
	Name     string
	NameSpan Span
	Value    Expr
	Span     Span
}

// Where is the single predicate `prop op value` of update/delete.
type Where struct {
	Prop     string
	PropSpan Span
	Op       CmpOp
	Value    Expr
	Span     Span
}
