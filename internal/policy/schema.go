package policy

import (
	"fmt"

	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// Namespace is the Cedar namespace of every Omnigraph entity and action.
const Namespace = "Omnigraph"

// Schema is the fixed Cedar schema every compiled policy is validated
// against in strict mode (spec/surfaces.md §3.1).
const Schema = `namespace Omnigraph {
  entity Group;
  entity Actor in [Group];
  entity Graph;
  entity Server;
  type RequestContext = {
    has_branch: Bool,
    branch: String,
    has_target_branch: Bool,
    target_branch: String,
    branch_is_protected: Bool,
    target_branch_is_protected: Bool,
  };
  action "read", "export", "change", "schema_apply", "branch_create", "branch_delete", "branch_merge", "admin", "invoke_query" appliesTo {
    principal: [Actor],
    resource: [Graph],
    context: RequestContext,
  };
  action "graph_list" appliesTo {
    principal: [Actor],
    resource: [Server],
    context: RequestContext,
  };
}
`

// newValidator resolves Schema into a strict-mode validator.
func newValidator() (*validate.Validator, error) {
	var s schema.Schema
	if err := s.UnmarshalCedar([]byte(Schema)); err != nil {
		return nil, fmt.Errorf("policy: built-in Cedar schema: %w", err)
	}
	r, err := s.Resolve()
	if err != nil {
		return nil, fmt.Errorf("policy: built-in Cedar schema: %w", err)
	}
	return validate.New(r, validate.WithStrict()), nil
}
