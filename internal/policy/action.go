package policy

// Action is one Cedar action of the Omnigraph schema (spec/surfaces.md §3.1).
type Action string

// The actions. Admin is reserved: rules may grant it but no route checks it.
const (
	Read         Action = "read"
	Export       Action = "export"
	Change       Action = "change"
	SchemaApply  Action = "schema_apply"
	BranchCreate Action = "branch_create"
	BranchDelete Action = "branch_delete"
	BranchMerge  Action = "branch_merge"
	Admin        Action = "admin"
	InvokeQuery  Action = "invoke_query"
	GraphList    Action = "graph_list"
)

// Actions lists every action in schema order.
func Actions() []Action {
	return []Action{Read, Export, Change, SchemaApply, BranchCreate, BranchDelete, BranchMerge, Admin, InvokeQuery, GraphList}
}

// Valid reports whether a is one of the schema's actions.
func (a Action) Valid() bool {
	for _, x := range Actions() {
		if a == x {
			return true
		}
	}
	return false
}

// BranchScoped reports whether rules may restrict a with branch_scope.
func (a Action) BranchScoped() bool { return a == Read || a == Export || a == Change }

// TargetScoped reports whether rules may restrict a with target_branch_scope.
func (a Action) TargetScoped() bool {
	return a == BranchCreate || a == SchemaApply || a == BranchDelete || a == BranchMerge
}

// ServerScoped reports whether a applies to the server (Server::"root")
// rather than to a graph.
func (a Action) ServerScoped() bool { return a == GraphList }

// Scope restricts a rule to protected or unprotected branches.
type Scope string

// The scopes.
const (
	ScopeAny         Scope = "any"
	ScopeProtected   Scope = "protected"
	ScopeUnprotected Scope = "unprotected"
)

func (s Scope) valid() bool { return s == ScopeAny || s == ScopeProtected || s == ScopeUnprotected }
