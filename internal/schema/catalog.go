package schema

import (
	"regexp"
	"strconv"
	"strings"
)

// Catalog is a compiled, validated schema. It is immutable after Compile
// returns; callers must not modify it.
type Catalog struct {
	Source     string       // the accepted .pg text
	Interfaces []*Interface // declaration order
	Nodes      []*NodeType  // declaration order
	Edges      []*EdgeType  // declaration order
	// Warnings are findings that do not stop the schema from compiling,
	// such as an unknown annotation one typo away from a known one
	// (which would otherwise be inert metadata); Kind is Warning.
	Warnings []*Error

	nodeByName  map[string]*NodeType
	edgeByName  map[string]*EdgeType
	edgeByLower map[string]*EdgeType
	ifaceByName map[string]*Interface
}

// Node returns the node type with exactly this name.
func (c *Catalog) Node(name string) (*NodeType, bool) {
	n, ok := c.nodeByName[name]
	return n, ok
}

// Edge returns the edge type named name: an exact match first, else the
// edge whose lowercased name equals lowercase(name). Compile rejects
// schemas where two edge names collide after lowercasing, so the fallback
// is unambiguous.
func (c *Catalog) Edge(name string) (*EdgeType, bool) {
	if e, ok := c.edgeByName[name]; ok {
		return e, true
	}
	e, ok := c.edgeByLower[strings.ToLower(name)]
	return e, ok
}

// Interface returns the interface with exactly this name.
func (c *Catalog) Interface(name string) (*Interface, bool) {
	i, ok := c.ifaceByName[name]
	return i, ok
}

// index fills the lookup maps; Compile calls it once.
func (c *Catalog) index() {
	c.nodeByName = make(map[string]*NodeType, len(c.Nodes))
	c.edgeByName = make(map[string]*EdgeType, len(c.Edges))
	c.edgeByLower = make(map[string]*EdgeType, len(c.Edges))
	c.ifaceByName = make(map[string]*Interface, len(c.Interfaces))
	for _, n := range c.Nodes {
		if _, dup := c.nodeByName[n.Name]; !dup {
			c.nodeByName[n.Name] = n
		}
	}
	for _, e := range c.Edges {
		if _, dup := c.edgeByName[e.Name]; !dup {
			c.edgeByName[e.Name] = e
		}
		if _, dup := c.edgeByLower[strings.ToLower(e.Name)]; !dup {
			c.edgeByLower[strings.ToLower(e.Name)] = e
		}
	}
	for _, i := range c.Interfaces {
		if _, dup := c.ifaceByName[i.Name]; !dup {
			c.ifaceByName[i.Name] = i
		}
	}
}

// Kind is the base kind of a property type.
type Kind uint8

// The property kinds. KindList and KindEnum are composite: see Type.Elem and
// Type.Enum.
const (
	KindInvalid Kind = iota
	KindString
	KindBool
	KindI32
	KindI64
	KindU32
	KindU64
	KindF32
	KindF64
	KindDate
	KindDateTime
	KindVector
	KindBlob
	KindList
	KindEnum
)

var kindNames = [...]string{
	KindInvalid:  "invalid",
	KindString:   "String",
	KindBool:     "Bool",
	KindI32:      "I32",
	KindI64:      "I64",
	KindU32:      "U32",
	KindU64:      "U64",
	KindF32:      "F32",
	KindF64:      "F64",
	KindDate:     "Date",
	KindDateTime: "DateTime",
	KindVector:   "Vector",
	KindBlob:     "Blob",
	KindList:     "List",
	KindEnum:     "enum",
}

// String returns the .pg spelling of the kind ("String", "I32", "Vector", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// baseKinds maps .pg base type names (the ones allowed in lists) to kinds.
var baseKinds = map[string]Kind{
	"String": KindString, "Blob": KindBlob, "Bool": KindBool,
	"I32": KindI32, "I64": KindI64, "U32": KindU32, "U64": KindU64,
	"F32": KindF32, "F64": KindF64, "DateTime": KindDateTime, "Date": KindDate,
}

// IsNumeric reports whether values of k are integers or floats.
func (k Kind) IsNumeric() bool {
	switch k {
	case KindI32, KindI64, KindU32, KindU64, KindF32, KindF64:
		return true
	}
	return false
}

// IsInteger reports whether k is one of the integer kinds.
func (k Kind) IsInteger() bool {
	switch k {
	case KindI32, KindI64, KindU32, KindU64:
		return true
	}
	return false
}

// Type is a property type.
type Type struct {
	Kind     Kind
	Nullable bool
	Elem     Kind     // for KindList: the element base kind
	Dim      int      // for KindVector
	Enum     []string // for KindEnum: sorted, deduplicated
}

// String returns the .pg spelling, e.g. "[String]?", "Vector(3)", "enum(a, b)".
func (t Type) String() string {
	var s string
	switch t.Kind {
	case KindList:
		s = "[" + t.Elem.String() + "]"
	case KindVector:
		s = "Vector(" + strconv.Itoa(t.Dim) + ")"
	case KindEnum:
		s = "enum(" + strings.Join(t.Enum, ", ") + ")"
	default:
		s = t.Kind.String()
	}
	if t.Nullable {
		s += "?"
	}
	return s
}

// Equal reports whether two types are identical, nullability and enum value
// sets included.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || t.Nullable != u.Nullable || t.Elem != u.Elem || t.Dim != u.Dim || len(t.Enum) != len(u.Enum) {
		return false
	}
	for i := range t.Enum {
		if t.Enum[i] != u.Enum[i] {
			return false
		}
	}
	return true
}

// IsNumeric reports whether t is a scalar integer or float type.
func (t Type) IsNumeric() bool { return t.Kind.IsNumeric() }

// IsOrderable reports whether scalar values of t have a total order usable
// for comparisons, ORDER BY and BTREE indexes: strings, enums, bools,
// numbers, Date and DateTime. Lists, vectors and blobs are not orderable.
func (t Type) IsOrderable() bool {
	switch t.Kind {
	case KindString, KindEnum, KindBool, KindDate, KindDateTime:
		return true
	}
	return t.Kind.IsNumeric()
}

// IsScalar reports whether t holds one value per row that is not a list,
// vector or blob.
func (t Type) IsScalar() bool {
	switch t.Kind {
	case KindList, KindVector, KindBlob:
		return false
	}
	return true
}

// LitKind is the kind of an annotation literal.
type LitKind uint8

// The literal kinds. LitIdent is a bare word used as an argument, e.g. the
// `text` in @embed(text).
const (
	LitString LitKind = iota + 1
	LitInt
	LitFloat
	LitBool
	LitIdent
)

// Literal is an annotation argument. Str holds the decoded string for
// LitString, the word for LitIdent, and the source text for numbers.
type Literal struct {
	Kind  LitKind
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// String renders the literal as .pg source.
func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return quote(l.Str)
	case LitInt:
		return strconv.FormatInt(l.Int, 10)
	case LitFloat:
		if l.Str != "" {
			return l.Str
		}
		return strconv.FormatFloat(l.Float, 'f', -1, 64)
	case LitBool:
		return strconv.FormatBool(l.Bool)
	case LitIdent:
		return l.Str
	}
	return "<invalid literal>"
}

// text returns the literal as a text value when it is a string or bare word.
func (l Literal) text() (string, bool) {
	if l.Kind == LitString || l.Kind == LitIdent {
		return l.Str, true
	}
	return "", false
}

// Annotation is an `@name` or `@name(arg, k = v, ...)` as written. Args holds
// at most one positional argument (the grammar allows exactly one when
// parentheses are present).
type Annotation struct {
	Name   string
	Args   []Literal
	KwArgs map[string]Literal
	Pos    Pos
}

// Embed records an @embed on a Vector property: which String property the
// vectors are computed from, and the optional model name. It is metadata
// only; nothing is computed at load.
type Embed struct {
	Source string
	Model  string
}

// Property is a declared or injected property of a node, edge or interface.
type Property struct {
	Name        string
	ID          uint32 // stable property id; 0 for interface properties
	Type        Type
	Annotations []Annotation
	Description string
	Embed       *Embed
	Injected    string // interface name if injected from an interface, else ""
	RenameFrom  string
	Pos         Pos
}

// HasAnnotation reports whether the property carries @name.
func (p *Property) HasAnnotation(name string) bool {
	for _, a := range p.Annotations {
		if a.Name == name {
			return true
		}
	}
	return false
}

// RangeConstraint is @range(Prop, Min..Max); a nil bound is open. Bounds are
// inclusive and finite.
type RangeConstraint struct {
	Prop string
	Min  *float64
	Max  *float64
}

// CheckConstraint is @check(Prop, "Pattern"); Re is the compiled, unanchored
// RE2 pattern.
type CheckConstraint struct {
	Prop    string
	Pattern string
	Re      *regexp.Regexp
}

// Card is an edge's per-source out-degree bound; Max is meaningless when
// Unbounded. The default is 0..*.
type Card struct {
	Min       int64
	Max       int64
	Unbounded bool
}

// String renders the bound as written in .pg, e.g. "0..1" or "1..*".
func (c Card) String() string {
	if c.Unbounded {
		return strconv.FormatInt(c.Min, 10) + "..*"
	}
	return strconv.FormatInt(c.Min, 10) + ".." + strconv.FormatInt(c.Max, 10)
}

// Allows reports whether an out-degree of n satisfies the bound.
func (c Card) Allows(n int64) bool {
	return n >= c.Min && (c.Unbounded || n <= c.Max)
}

// NodeType is a node type: a table with a hidden String `id` plus Props.
type NodeType struct {
	Name        string
	ID          uint32
	Props       []*Property // declared order, injected interface props appended
	Key         []string    // @key property names ordered by stable property id; nil if none
	Uniques     [][]string
	Indexes     [][]string
	Ranges      []RangeConstraint
	Checks      []CheckConstraint
	Implements  []string
	Annotations []Annotation
	Description string
	Instruction string
	RenameFrom  string
	Pos         Pos
}

// Prop returns the property with this name.
func (n *NodeType) Prop(name string) (*Property, bool) { return findProp(n.Props, name) }

// EdgeType is a directed edge type From -> To: a table with hidden `id`,
// `src` and `dst` String columns plus Props.
type EdgeType struct {
	Name        string
	From        string
	To          string
	ID          uint32
	Props       []*Property
	Card        Card
	Uniques     [][]string // may name "src"/"dst"
	Indexes     [][]string // may name "src"/"dst"
	Annotations []Annotation
	Description string
	Instruction string
	RenameFrom  string
	Pos         Pos
}

// Prop returns the property with this name.
func (e *EdgeType) Prop(name string) (*Property, bool) { return findProp(e.Props, name) }

// Interface is a named set of properties that nodes can implement. It is not
// a queryable type.
type Interface struct {
	Name  string
	Props []*Property
	Pos   Pos
}

// Prop returns the property with this name.
func (i *Interface) Prop(name string) (*Property, bool) { return findProp(i.Props, name) }

func findProp(props []*Property, name string) (*Property, bool) {
	for _, p := range props {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}
