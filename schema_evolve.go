package omnigraph

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/exec"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Schema evolution types (docs/schema-evolution.md).
type (
	// SchemaPlan is a resolved schema change: Supported, and its Steps in
	// the deterministic order of spec/languages.md §3; Warnings are those
	// of the desired schema (not part of its JSON).
	SchemaPlan = schema.Plan
	// SchemaWarning is a finding about a schema that compiles (its Pos,
	// Msg; Error renders "file:line:col: warning: msg").
	SchemaWarning = *schema.Error
	// SchemaStep is one step of a plan; String renders it as `schema plan`
	// prints it, and it marshals to the reference JSON shape.
	SchemaStep = schema.Step
	// SchemaApplyOptions select the branch, hard drops and the actor.
	SchemaApplyOptions = exec.SchemaApplyOptions
	// SchemaApplyResult reports the plan, whether it was applied and the commit.
	SchemaApplyResult = exec.SchemaApplyResult
	// UnsupportedSchemaChangeError refuses a plan with an unsupported step.
	UnsupportedSchemaChangeError = exec.UnsupportedSchemaChangeError
	// ConstraintAdditionError refuses a constraint the stored data breaks,
	// listing offending entities.
	ConstraintAdditionError = exec.ConstraintAdditionError
	// MergeSchemaError refuses a three-way merge across a schema change.
	MergeSchemaError = exec.MergeSchemaError
)

// Schema errors: errors.Is matches every refusal of its family.
var (
	// ErrSchemaChange: an apply refused for what it would change
	// (unsupported step, constraint the data breaks).
	ErrSchemaChange = exec.ErrSchemaChange
	// ErrSchemaPlan: the desired schema does not resolve against the
	// accepted one (a bad @rename_from).
	ErrSchemaPlan = schema.ErrPlan
	// ErrMergeSchema: a three-way merge across different schemas.
	ErrMergeSchema = exec.ErrMergeSchema
)

// PlanSchema plans the change from the schema of o.Branch's head to the
// desired .pg source without applying it.
func (g *Graph) PlanSchema(ctx context.Context, desired string, o SchemaApplyOptions) (*SchemaPlan, error) {
	return g.eng.PlanSchema(ctx, desired, o)
}

// ApplySchema evolves o.Branch to the desired schema in one atomic commit.
// Other branches keep their schemas. A no-op returns Applied false.
func (g *Graph) ApplySchema(ctx context.Context, desired string, o SchemaApplyOptions) (*SchemaApplyResult, error) {
	return g.eng.ApplySchema(g.writeCtx(ctx), desired, o)
}
