package query

import (
	"errors"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// LintReport is the `omnigraph lint --json` document (spec §5.9). Field
// tags are a compatibility contract.
type LintReport struct {
	Status           string        `json:"status"` // "ok" or "error"
	SchemaSource     string        `json:"schema_source"`
	QueryPath        string        `json:"query_path"`
	QueriesProcessed int           `json:"queries_processed"`
	Errors           int           `json:"errors"`
	Warnings         int           `json:"warnings"`
	Infos            int           `json:"infos"`
	Results          []LintResult  `json:"results"`
	Findings         []LintFinding `json:"findings"`
}

// LintResult is the outcome for one query.
type LintResult struct {
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`   // "read" or "mutation"
	Status    string         `json:"status"` // "ok" or "error"
	Warnings  []string       `json:"warnings,omitempty"`
	Error     string         `json:"error,omitempty"`
	Operation *LintOperation `json:"operation,omitempty"`
	// Diagnostics holds every error of a failed query with its position
	// (Error, the JSON contract, summarises them in one string).
	Diagnostics []*Error `json:"-"`
}

// LintOperation describes what a valid query returns, reads and writes.
type LintOperation struct {
	Result []LintField `json:"result"`
	Reads  []LintTable `json:"reads"`
	Writes []LintTable `json:"writes"`
}

// LintField is one result column in the compile-time descriptor.
type LintField struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	ItemKind  string `json:"item_kind,omitempty"`
	VectorDim int    `json:"vector_dim,omitempty"`
	Nullable  bool   `json:"nullable"`
}

// LintTable names a table a query touches.
type LintTable struct {
	Kind     string `json:"kind"` // "node" or "edge"
	TypeName string `json:"type_name"`
}

// LintFinding is a file-level diagnostic.
type LintFinding struct {
	Severity   string   `json:"severity"` // "error", "warning" or "info"
	Code       string   `json:"code"`
	Message    string   `json:"message"`
	TypeName   string   `json:"type_name,omitempty"`
	Property   string   `json:"property,omitempty"`
	QueryNames []string `json:"query_names,omitempty"`
}

// WarnHardcodedMutation is the per-query warning for a mutation without
// parameters.
const WarnHardcodedMutation = "mutation declares no params; hardcoded mutations are easy to miss"

// KindName maps a type to the wire kind used by lint and the stored-query
// surface: string|bool|int|bigint|float|date|datetime|blob|vector|list.
func KindName(k schema.Kind) string {
	switch k {
	case schema.KindString, schema.KindEnum:
		return "string"
	case schema.KindBool:
		return "bool"
	case schema.KindI32, schema.KindU32:
		return "int"
	case schema.KindI64, schema.KindU64:
		return "bigint"
	case schema.KindF32, schema.KindF64:
		return "float"
	case schema.KindDate:
		return "date"
	case schema.KindDateTime:
		return "datetime"
	case schema.KindBlob:
		return "blob"
	case schema.KindVector:
		return "vector"
	case schema.KindList:
		return "list"
	}
	return "unknown"
}

// FieldOf describes a type as a LintField.
func FieldOf(name string, t schema.Type) LintField {
	f := LintField{Name: name, Kind: KindName(t.Kind), Nullable: t.Nullable}
	if t.Kind == schema.KindList {
		f.ItemKind = KindName(t.Elem)
	}
	if t.Kind == schema.KindVector {
		f.VectorDim = t.Dim
	}
	return f
}

func lintTables(refs []TableRef) []LintTable {
	out := []LintTable{}
	for _, r := range refs {
		k := "node"
		if r.Edge {
			k = "edge"
		}
		out = append(out, LintTable{Kind: k, TypeName: r.Name})
	}
	return out
}

// Lint checks every query of src against cat and reports per-query results
// and file-level findings: Q000 for syntax errors, L201 for nullable
// properties no update query sets. Status is "error" iff any query or the
// file failed.
func Lint(cat *schema.Catalog, schemaSource, queryPath, src string) *LintReport {
	r := &LintReport{SchemaSource: schemaSource, QueryPath: queryPath, Results: []LintResult{}, Findings: []LintFinding{}}
	for _, w := range cat.Warnings {
		// S001: the schema compiles but holds a probable mistake (a
		// misspelt annotation, which would be inert metadata).
		r.Findings = append(r.Findings, LintFinding{Severity: "warning", Code: "S001", Message: w.Pos.String() + ": " + w.Msg})
		r.Warnings++
	}
	ast, perr := Parse(queryPath, src)
	var plist ErrorList
	if errors.As(perr, &plist) {
		for _, e := range plist {
			r.Findings = append(r.Findings, LintFinding{Severity: "error", Code: "Q000", Message: e.Error()})
			r.Errors++
		}
	}
	// updates[type] = names of valid update queries; assigned[type][prop].
	updates := map[string][]string{}
	assigned := map[string]map[string]bool{}
	for _, q := range ast.Queries {
		r.QueriesProcessed++
		res := LintResult{Name: q.Name, Kind: "read", Status: "ok"}
		if q.IsMutation() {
			res.Kind = "mutation"
		}
		plan, errs := checkQuery(cat, queryPath, src, q)
		if len(errs) > 0 {
			res.Status = "error"
			res.Diagnostics = errs
			res.Error = errs[0].Error()
			if len(errs) > 1 {
				res.Error = fmt.Sprintf("%s (and %d more errors)", res.Error, len(errs)-1)
			}
			r.Errors++
			r.Results = append(r.Results, res)
			continue
		}
		op := &LintOperation{Result: []LintField{}, Reads: lintTables(plan.Reads), Writes: lintTables(plan.Writes)}
		for _, col := range plan.Columns {
			op.Result = append(op.Result, FieldOf(col.DescName, col.Type))
		}
		res.Operation = op
		if q.IsMutation() && len(q.Params) == 0 {
			res.Warnings = append(res.Warnings, WarnHardcodedMutation)
			r.Warnings++
		}
		for _, m := range plan.Mutations {
			if m.Kind != MutUpdateNode {
				continue
			}
			if n := updates[m.Type]; len(n) == 0 || n[len(n)-1] != q.Name {
				updates[m.Type] = append(updates[m.Type], q.Name)
			}
			if assigned[m.Type] == nil {
				assigned[m.Type] = map[string]bool{}
			}
			for _, a := range m.Assigns {
				assigned[m.Type][a.Prop] = true
			}
		}
		r.Results = append(r.Results, res)
	}
	for _, nt := range cat.Nodes {
		names := updates[nt.Name]
		if len(names) == 0 {
			continue
		}
		for _, p := range nt.Props {
			if !p.Type.Nullable || slices.Contains(nt.Key, p.Name) || p.Embed != nil || assigned[nt.Name][p.Name] {
				continue
			}
			r.Findings = append(r.Findings, LintFinding{Severity: "warning", Code: "L201",
				Message:  fmt.Sprintf("%s.%s exists in schema but no update query sets it", nt.Name, p.Name),
				TypeName: nt.Name, Property: p.Name, QueryNames: names})
			r.Warnings++
		}
	}
	r.Status = "ok"
	if r.Errors > 0 {
		r.Status = "error"
	}
	return r
}
