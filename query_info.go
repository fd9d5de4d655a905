package omnigraph

import (
	"context"
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// QueryInfo describes one compiled query without running it: what the
// stored-query catalog (GET /queries) and tool bridges publish.
type QueryInfo struct {
	Name        string
	Description string
	Instruction string
	// Mutation is true for insert/update/delete queries.
	Mutation bool
	Params   []ParamInfo
}

// ParamInfo is one declared parameter. Kind is one of string, bool, int,
// bigint, float, date, datetime, blob, vector, list; ItemKind is the element
// kind of a list and VectorDim the dimension of a vector.
type ParamInfo struct {
	Name      string
	Kind      string
	ItemKind  string
	VectorDim int
	Nullable  bool
}

// ErrQuerySource is matched by every *QuerySourceError.
var ErrQuerySource = errors.New("invalid query source")

// QuerySourceError reports query source that cannot run as asked: it
// defines several queries and none was named, or it is a read where a
// mutation was required (or the reverse). Nothing was read or written.
type QuerySourceError struct{ Msg string }

func (e *QuerySourceError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrQuerySource) true.
func (e *QuerySourceError) Is(target error) bool { return target == ErrQuerySource }

// DescribeQuery compiles query source against the schema at a target and
// describes the query called name ("" selects the only query of a
// one-query source). Compile errors are the same typed errors Query and
// Mutate return; an ambiguous source is a *QuerySourceError.
func (g *Graph) DescribeQuery(ctx context.Context, t Target, src, name string) (*QueryInfo, error) {
	cat, err := g.Catalog(ctx, t)
	if err != nil {
		return nil, err
	}
	if name == "" {
		if f, ferr := query.Compile(cat, "<query>", src); ferr == nil && len(f.Names()) != 1 {
			return nil, &QuerySourceError{Msg: fmt.Sprintf("the source defines %d queries: name the one to run", len(f.Names()))}
		}
	}
	plan, err := compileNamed(cat, src, name)
	if err != nil {
		return nil, err
	}
	info := &QueryInfo{Name: plan.Name, Description: plan.Description, Instruction: plan.Instruction, Mutation: plan.IsMutation()}
	for _, p := range plan.Params {
		f := query.FieldOf(p.Name, p.Type)
		info.Params = append(info.Params, ParamInfo{Name: f.Name, Kind: f.Kind, ItemKind: f.ItemKind, VectorDim: f.VectorDim, Nullable: f.Nullable})
	}
	return info, nil
}
