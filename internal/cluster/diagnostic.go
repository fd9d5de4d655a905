package cluster

import "fmt"

// Diagnostic codes. They are part of the --json contract: scripts branch on
// them, never on messages.
const (
	CodeConfigMissing      = "config_missing"
	CodeConfigParse        = "config_parse_error"
	CodeUnsupportedConfig  = "unsupported_config"
	CodeInvalidGraphID     = "invalid_graph_id"
	CodeFileMissing        = "file_missing"
	CodeSchemaParse        = "schema_parse_error"
	CodeQueryParse         = "query_parse_error"
	CodeQueryType          = "query_type_error"
	CodeDuplicateQueryName = "duplicate_query_name"
	CodePolicyParse        = "policy_parse_error"
	CodePolicyBinding      = "policy_binding_error"
	CodeProvider           = "provider_error"
	CodeExternalBlob       = "external_blob_error"
	CodeStateMissing       = "state_missing"
	CodeStateExists        = "state_exists"
	CodeStateInvalid       = "state_invalid"
	CodeStateConflict      = "state_conflict"
	CodeStateLocked        = "state_locked"
	CodeLockMissing        = "lock_missing"
	CodeLockMismatch       = "lock_id_mismatch"
	CodeLockInvalid        = "lock_invalid"
	CodeStorage            = "storage_error"
	CodeApprovalRequired   = "approval_required"
	CodeApprovalStale      = "approval_stale"
	CodeApprovalNotNeeded  = "approval_not_applicable"
	CodeActorRequired      = "actor_required"
	CodeUnsupportedChange  = "apply_unsupported_change"
	CodeDependencyBlocked  = "apply_dependency_blocked"
	CodeGraphCreateFailed  = "graph_create_failed"
	CodeGraphIncomplete    = "graph_create_incomplete"
	CodeGraphDeleteFailed  = "graph_delete_failed"
	CodeGraphUnreadable    = "graph_unreadable"
	CodeGraphMissing       = "graph_missing"
	CodeSchemaDrift        = "schema_drifted"
	CodeRecoveryPending    = "cluster_recovery_pending"
	CodeRecoveryApplied    = "cluster_recovery_applied"
	CodePayloadMissing     = "catalog_payload_missing"
	CodePayloadMismatch    = "catalog_payload_mismatch"
	CodePayloadRead        = "catalog_payload_read_error"
)

// Severity of a diagnostic: errors make a command report ok=false.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Diagnostic is one finding of a cluster command.
type Diagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Resource string `json:"resource,omitempty"`
	Message  string `json:"message"`
}

func (d Diagnostic) String() string {
	s := d.Severity + "[" + d.Code + "]"
	if d.Resource != "" {
		s += " " + d.Resource
	}
	return s + ": " + d.Message
}

func errorf(code, resource, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

func warnf(code, resource, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: SeverityWarning, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

func hasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}
