package schema

// The AST is the parser's output and the validator's input. It records what
// was written, with spans; desugaring and checking happen in build.go.

type declKind uint8

const (
	declInterface declKind = iota + 1
	declNode
	declEdge
)

func (k declKind) String() string {
	switch k {
	case declInterface:
		return "interface"
	case declNode:
		return "node"
	}
	return "edge"
}

// nameRef is a name with the span it was written at.
type nameRef struct {
	name string
	span Span
}

type declAST struct {
	kind        declKind
	name        nameRef
	span        Span // the keyword
	annotations []annotationAST
	implements  []nameRef // nodes
	from, to    nameRef   // edges
	card        *cardAST  // edges; nil = default 0..*
	props       []*propAST
	constraints []*constraintAST
}

type propAST struct {
	name        nameRef
	typ         Type
	typSpan     Span
	annotations []annotationAST
}

type annotationAST struct {
	name   string
	span   Span // from '@' to the end of the annotation
	args   []Literal
	kwargs map[string]Literal
	kwSeen []nameRef // kwarg names in written order, for diagnostics
}

type cardAST struct {
	card Card
	span Span
}

// constraintAST is a body constraint @key/@unique/@index/@range/@check.
type constraintAST struct {
	name string
	span Span
	args []cargAST
}

type cargKind uint8

const (
	cargIdent cargKind = iota + 1
	cargLiteral
	cargRange
)

type cargAST struct {
	kind     cargKind
	span     Span
	ident    string
	lit      Literal
	min, max *float64
}
