package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Plan is the logical plan of one checked query. Exactly one of Read and
// Mutations is set. Plans are immutable once built.
type Plan struct {
	Name        string
	Description string
	Instruction string
	Params      []ParamSpec
	// Read is the operator tree of a read query; its root produces the
	// output rows with Columns.
	Read    Op
	Columns []Column
	// Mutations run in order, atomically, as one commit.
	Mutations []*MutationOp
	// Reads and Writes list the tables touched (node/edge type names),
	// deduplicated in first-use order.
	Reads, Writes []TableRef
}

// IsMutation reports whether the plan is a mutation.
func (p *Plan) IsMutation() bool { return p.Read == nil }

// ParamSpec is a declared parameter with its resolved type.
type ParamSpec struct {
	Name string // without '$'
	Type schema.Type
	// Enums lists the enum properties the parameter is compared with; a
	// String value that is in none of their value sets could only match
	// nothing, so it is refused like the same value in a write
	// (CheckEnums).
	Enums []EnumUse
}

// EnumUse is one enum property a parameter is compared with.
type EnumUse struct {
	Target string   // "Type.prop"
	Values []string // the enum's values, sorted
}

// CheckEnums refuses a String value that is not a value of an enum the
// parameter is compared with (nil, and values of other kinds, pass).
func (p ParamSpec) CheckEnums(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	for _, e := range p.Enums {
		if !slices.Contains(e.Values, s) {
			return &value.Error{Name: p.Name, Reason: "invalid enum value",
				Msg: fmt.Sprintf("parameter '%s': invalid enum value '%s' for %s (expected: %s)", p.Name, s, e.Target, strings.Join(e.Values, ", "))}
		}
	}
	return nil
}

// Column describes one output column.
type Column struct {
	Name string // runtime name: alias, "v.prop", "v", "param", "literal"
	// DescName is the compile-time descriptor name used by lint: the
	// property name for `$v.prop`, else Name.
	DescName string
	Type     schema.Type
}

// TableRef names a node or edge table.
type TableRef struct {
	Edge bool
	Name string
}

func (t TableRef) String() string {
	if t.Edge {
		return "edge:" + t.Name
	}
	return "node:" + t.Name
}

// OperandKind classifies an Operand.
type OperandKind uint8

// Operand kinds.
const (
	OpdProp  OperandKind = iota + 1 // Var.Prop of a node or edge variable
	OpdID                           // the id of node/edge variable Var
	OpdParam                        // parameter Param
	OpdLit                          // literal Lit
	OpdNow                          // now(), current UTC DateTime
	OpdRank                         // the score of Rank (nearest distance, bm25 score, rrf score)
)

// Operand is a value read by a predicate, projection, sort key or
// assignment. Type is its static type; for literals it is the literal's
// natural type (integer → I64, float → F64, …).
type Operand struct {
	Kind  OperandKind
	Var   string
	Prop  string
	Param string
	Lit   *Lit
	Rank  *RankSpec
	Type  schema.Type
}

func (o Operand) String() string {
	switch o.Kind {
	case OpdProp:
		if o.Var == "" {
			return o.Prop // a mutation's where-predicate column
		}
		return "$" + o.Var + "." + o.Prop
	case OpdID:
		return "$" + o.Var + ".id"
	case OpdParam:
		return "$" + o.Param
	case OpdLit:
		return litString(o.Lit)
	case OpdNow:
		return "now()"
	case OpdRank:
		return o.Rank.String()
	}
	return "?"
}

func litString(l *Lit) string {
	switch l.Kind {
	case LitString:
		return strconv.Quote(l.Str)
	case LitInt:
		return strconv.FormatInt(l.Int, 10)
	case LitFloat:
		return strconv.FormatFloat(l.Float, 'f', -1, 64)
	case LitBool:
		return strconv.FormatBool(l.Bool)
	case LitDate:
		return "date(" + strconv.Quote(l.Str) + ")"
	case LitDateTime:
		return "datetime(" + strconv.Quote(l.Str) + ")"
	case LitList:
		parts := make([]string, len(l.Elems))
		for i, e := range l.Elems {
			parts[i] = litString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "?"
}

// Pred is a boolean condition. Comparison: Left Op Right. For OpContains
// with a list Left it is membership; Text predicates use Func instead.
type Pred struct {
	Left  Operand
	Op    CmpOp
	Right Operand
	// Func is "search", "fuzzy" or "match_text" for a text predicate over
	// Left (the field) and Right (the query); MaxEdits is fuzzy's bound.
	Func     string
	MaxEdits *Operand
}

func (p Pred) String() string {
	if p.Func != "" {
		s := p.Func + "(" + p.Left.String() + ", " + p.Right.String()
		if p.MaxEdits != nil {
			s += ", " + p.MaxEdits.String()
		}
		return s + ")"
	}
	return p.Left.String() + " " + p.Op.String() + " " + p.Right.String()
}

// Constant reports whether the operand has one value for a whole run: a
// parameter, a literal or now().
func (o Operand) Constant() bool {
	return o.Kind == OpdParam || o.Kind == OpdLit || o.Kind == OpdNow
}

// ConstCmp returns a comparison with a constant side normalised to
// `v op c`, c the constant (`5 < $p.age` becomes `$p.age > 5`); ok is false
// for a text predicate, a right side that is not constant, or a constant
// left side whose operator has no mirror. Both sides may be constant; the
// caller checks what v reads.
func (p *Pred) ConstCmp() (v, c Operand, op CmpOp, ok bool) {
	if p.Func != "" {
		return v, c, op, false
	}
	v, c, op = p.Left, p.Right, p.Op
	if v.Constant() {
		if op, ok = op.Flip(); !ok {
			return v, c, op, false
		}
		v, c = c, v
	}
	return v, c, op, c.Constant()
}

// Dir is a traversal direction.
type Dir uint8

// Directions: Out walks src→dst, In walks dst→src, Both is the deduplicated
// union (undirected `<edge>`).
const (
	DirOut Dir = iota + 1
	DirIn
	DirBoth
)

func (d Dir) String() string {
	switch d {
	case DirOut:
		return "out"
	case DirIn:
		return "in"
	case DirBoth:
		return "both"
	}
	return "?"
}

// RankSpec is a ranking function: nearest (L2 distance ascending), bm25
// (score descending, non-matching rows dropped) or rrf over two arms.
type RankSpec struct {
	Func  string // "nearest", "bm25", "rrf"
	Var   string // ranked node variable (nearest/bm25)
	Field string // property
	Query Operand
	Arms  []*RankSpec // rrf
	K     Operand     // rrf constant (default literal 60)
}

func (r *RankSpec) String() string {
	if r.Func == "rrf" {
		return fmt.Sprintf("rrf(%s, %s, k=%s)", r.Arms[0], r.Arms[1], r.K)
	}
	return fmt.Sprintf("%s($%s.%s, %s)", r.Func, r.Var, r.Field, r.Query)
}

// Op is a logical operator. Rows are variable bindings (bag semantics)
// until Project/Aggregate turns them into output rows.
type Op interface {
	// Children returns the inputs (sub-plans included) for tree walks.
	Children() []Op
	describe() string
}

// Scan produces one row per node of Type bound to Var, keeping rows that
// satisfy every Filter (inline matches and pushed-down single-variable
// filters). With Rank set it emits rows in rank order, pre-filtered, cut to
// the top K for nearest (K = the query limit); later operators preserve
// that order.
type Scan struct {
	Var     string
	Type    string
	Filters []Pred
	Rank    *RankSpec
	K       int64
}

// Argument is the leaf of an anti-join sub-plan: the current outer row,
// exposing Vars.
type Argument struct{ Vars []string }

// Expand walks Edge from Src to Dst. Dst gets DstType. If DstBound, Dst is
// already bound and the expand is a join filter (cycle closing). Min/Max
// are hop bounds (BFS, shortest distance); EdgeVar, if set, binds one row
// per matching edge (only with 1..1 hops).
type Expand struct {
	Input    Op
	Src, Dst string
	EdgeVar  string
	Edge     string
	Dir      Dir
	Min, Max int64
	DstType  string
	DstBound bool
}

// CrossJoin is the cartesian product of two row sets.
type CrossJoin struct{ Left, Right Op }

// Filter keeps rows satisfying Pred (null operands → false).
type Filter struct {
	Input Op
	Pred  Pred
}

// AntiJoin keeps an Input row iff Sub, evaluated with that row as its
// Argument, produces no row.
type AntiJoin struct {
	Input Op
	Sub   Op
	Outer []string
}

// RankRows orders rows by Rank when the ranked variable was not introduced
// by a scan (e.g. it comes from a traversal); rows of one entity stay
// grouped.
type RankRows struct {
	Input Op
	Rank  *RankSpec
	K     int64
}

// ProjCol is one output column and the operand computing it.
type ProjCol struct {
	Name  string
	Value Operand
}

// Project maps rows to output columns.
type Project struct {
	Input Op
	Cols  []ProjCol
}

// AggCol is one aggregate output column: Func over Arg (count of a node or
// edge variable counts rows).
type AggCol struct {
	Name string
	Func string
	Arg  Operand
	Type schema.Type
}

// Aggregate groups by Keys (first-seen order) and computes Aggs; with no
// keys and no rows it yields one row (count 0, others null). Columns lists
// every output column name in projection order.
type Aggregate struct {
	Input   Op
	Keys    []ProjCol
	Aggs    []AggCol
	Columns []string
}

// SortKey is one ordering key: an operand over the pre-projection row, or
// (Column != "") an output column of an aggregate.
type SortKey struct {
	Value  Operand
	Column string
	Desc   bool
}

func (k SortKey) String() string {
	s := k.Value.String()
	if k.Column != "" {
		s = k.Column
	}
	if k.Desc {
		return s + " desc"
	}
	return s + " asc"
}

// Sort orders rows by Keys (nulls first ascending, last descending), then
// by the ascending id of every variable in TieBreak (sorted by name), or for
// aggregate output by every column in TieColumns; the order is total.
type Sort struct {
	Input      Op
	Keys       []SortKey
	TieBreak   []string
	TieColumns []string
}

// Limit keeps the first N rows.
type Limit struct {
	Input Op
	N     int64
}

func (o *Scan) Children() []Op      { return nil }
func (o *Argument) Children() []Op  { return nil }
func (o *Expand) Children() []Op    { return []Op{o.Input} }
func (o *CrossJoin) Children() []Op { return []Op{o.Left, o.Right} }
func (o *Filter) Children() []Op    { return []Op{o.Input} }
func (o *AntiJoin) Children() []Op  { return []Op{o.Input, o.Sub} }
func (o *RankRows) Children() []Op  { return []Op{o.Input} }
func (o *Project) Children() []Op   { return []Op{o.Input} }
func (o *Aggregate) Children() []Op { return []Op{o.Input} }
func (o *Sort) Children() []Op      { return []Op{o.Input} }
func (o *Limit) Children() []Op     { return []Op{o.Input} }

func predList(ps []Pred) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " AND ")
}

func (o *Scan) describe() string {
	s := fmt.Sprintf("Scan $%s: %s", o.Var, o.Type)
	if len(o.Filters) > 0 {
		s += " where " + predList(o.Filters)
	}
	if o.Rank != nil {
		s += " rank " + o.Rank.String()
		if o.K > 0 {
			s += " k=" + itoa(o.K)
		}
	}
	return s
}
func (o *Argument) describe() string { return "Argument " + varList(o.Vars) }
func (o *Expand) describe() string {
	s := fmt.Sprintf("Expand $%s -[%s %s", o.Src, o.Edge, o.Dir)
	if o.EdgeVar != "" {
		s += " as $" + o.EdgeVar
	}
	s += fmt.Sprintf(" hops %d..%d]-> $%s: %s", o.Min, o.Max, o.Dst, o.DstType)
	if o.DstBound {
		s += " (join)"
	}
	return s
}
func (o *CrossJoin) describe() string { return "CrossJoin" }
func (o *Filter) describe() string    { return "Filter " + o.Pred.String() }
func (o *AntiJoin) describe() string  { return "AntiJoin on " + varList(o.Outer) }
func (o *RankRows) describe() string {
	s := "RankRows " + o.Rank.String()
	if o.K > 0 {
		s += " k=" + itoa(o.K)
	}
	return s
}
func (o *Project) describe() string {
	s := make([]string, len(o.Cols))
	for i, c := range o.Cols {
		s[i] = c.Value.String() + " as " + strconv.Quote(c.Name)
	}
	return "Project " + strings.Join(s, ", ")
}
func (o *Aggregate) describe() string {
	var s []string
	for _, k := range o.Keys {
		s = append(s, "key "+k.Value.String()+" as "+strconv.Quote(k.Name))
	}
	for _, a := range o.Aggs {
		s = append(s, a.Func+"("+a.Arg.String()+") as "+strconv.Quote(a.Name))
	}
	return "Aggregate " + strings.Join(s, ", ")
}
func (o *Sort) describe() string {
	s := make([]string, len(o.Keys))
	for i, k := range o.Keys {
		s[i] = k.String()
	}
	out := "Sort " + strings.Join(s, ", ")
	if len(o.TieBreak) > 0 {
		out += " then ids " + varList(o.TieBreak)
	}
	if len(o.TieColumns) > 0 {
		out += " then columns " + strings.Join(o.TieColumns, ", ")
	}
	return out
}
func (o *Limit) describe() string { return "Limit " + itoa(o.N) }

func varList(vs []string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = "$" + v
	}
	return strings.Join(s, ", ")
}

// MutationKind classifies a mutation statement.
type MutationKind uint8

// Mutation kinds.
const (
	MutInsertNode MutationKind = iota + 1
	MutInsertEdge
	MutUpdateNode
	MutDeleteNode
	MutDeleteEdge
)

var mutNames = [...]string{MutInsertNode: "InsertNode", MutInsertEdge: "InsertEdge",
	MutUpdateNode: "UpdateNode", MutDeleteNode: "DeleteNode", MutDeleteEdge: "DeleteEdge"}

func (k MutationKind) String() string { return mutNames[k] }

// Assignment sets Prop to Value.
type Assignment struct {
	Prop  string
	Value Operand
}

// MutationOp is one mutation statement. For edges, the Where predicate's
// Left.Prop "from"/"to" mean src/dst, and InsertEdge carries From/To.
// DeleteNode lists the edge types it cascades into.
type MutationOp struct {
	Kind     MutationKind
	Type     string
	Assigns  []Assignment
	From, To *Operand
	Where    *Pred
	Cascade  []string
}

func (m *MutationOp) String() string {
	var b strings.Builder
	b.WriteString(m.Kind.String() + " " + m.Type)
	if m.From != nil {
		fmt.Fprintf(&b, " from=%s to=%s", m.From, m.To)
	}
	if len(m.Assigns) > 0 {
		s := make([]string, len(m.Assigns))
		for i, a := range m.Assigns {
			s[i] = a.Prop + "=" + a.Value.String()
		}
		b.WriteString(" set " + strings.Join(s, ", "))
	}
	if m.Where != nil {
		b.WriteString(" where " + m.Where.String())
	}
	if len(m.Cascade) > 0 {
		b.WriteString(" cascade " + strings.Join(m.Cascade, ", "))
	}
	return b.String()
}

// String renders the plan as an indented tree, for golden tests and
// `explain`-style debugging.
func (p *Plan) String() string {
	var b strings.Builder
	kind := "read"
	if p.IsMutation() {
		kind = "mutation"
	}
	fmt.Fprintf(&b, "query %s (%s)", p.Name, kind)
	for i, prm := range p.Params {
		if i == 0 {
			b.WriteString(" params")
		}
		fmt.Fprintf(&b, " $%s: %s", prm.Name, prm.Type)
	}
	b.WriteByte('\n')
	if p.Read != nil {
		writeOp(&b, p.Read, 1)
		cols := make([]string, len(p.Columns))
		for i, c := range p.Columns {
			cols[i] = c.Name + ": " + c.Type.String()
		}
		b.WriteString("  => " + strings.Join(cols, ", ") + "\n")
	}
	for _, m := range p.Mutations {
		b.WriteString("  " + m.String() + "\n")
	}
	return b.String()
}

func writeOp(b *strings.Builder, o Op, depth int) {
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(o.describe())
	b.WriteByte('\n')
	for _, c := range o.Children() {
		writeOp(b, c, depth+1)
	}
}
