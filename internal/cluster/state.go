package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// StateVersion is the only state.json version this build reads and writes.
const StateVersion = 1

// State is the ledger __cluster/state.json: what was applied. It is
// replaced as a whole by one compare-and-swap; it is the publish point of
// every cluster command that changes anything.
type State struct {
	Version          int                       `json:"version"`
	StateRevision    int64                     `json:"state_revision"`
	AppliedRevision  AppliedRevision           `json:"applied_revision"`
	ResourceStatuses map[string]ResourceStatus `json:"resource_statuses"`
	ApprovalRecords  map[string]ApprovalRecord `json:"approval_records"`
	RecoveryRecords  map[string]RecoveryRecord `json:"recovery_records"`
	Observations     map[string]Observation    `json:"observations"`
}

// AppliedRevision is the applied resource set.
type AppliedRevision struct {
	// ConfigDigest is the desired config digest of the last apply that fully
	// converged ("" before any).
	ConfigDigest string                   `json:"config_digest"`
	Resources    map[string]ResourceState `json:"resources"`
}

// ResourceState is one applied resource.
type ResourceState struct {
	Digest            string             `json:"digest"`
	AppliesTo         []string           `json:"applies_to,omitempty"`
	EmbeddingProvider string             `json:"embedding_provider,omitempty"`
	EmbeddingProfile  *EmbeddingProvider `json:"embedding_profile,omitempty"`
	// Root is a graph's root relative to the storage root.
	Root string `json:"root,omitempty"`
}

func (r ResourceState) equal(o ResourceState) bool {
	return digestJSON(r) == digestJSON(o)
}

// Resource status values.
const (
	StatusApplied = "applied"
	StatusDrifted = "drifted"
	StatusBlocked = "blocked"
	StatusError   = "error"
	StatusPending = "pending"
)

// ResourceStatus is the last known status of a resource.
type ResourceStatus struct {
	Status     string   `json:"status"`
	Conditions []string `json:"conditions"`
	Message    string   `json:"message,omitempty"`
}

// ApprovalRecord is a consumed approval.
type ApprovalRecord struct {
	Resource   string `json:"resource"`
	Actor      string `json:"actor"`
	ApprovedAt int64  `json:"approved_at"`
	ConsumedAt int64  `json:"consumed_at"`
}

// RecoveryRecord is an audit entry of a recovery sweep.
type RecoveryRecord struct {
	Operation  string `json:"operation"`
	Resource   string `json:"resource"`
	Outcome    string `json:"outcome"`
	RecordedAt int64  `json:"recorded_at"`
}

// Observation is what import/refresh saw at a graph root (branch main).
type Observation struct {
	Exists              bool   `json:"exists"`
	GraphCommitID       string `json:"graph_commit_id,omitempty"`
	LiveSchemaDigest    string `json:"live_schema_digest,omitempty"`
	DesiredSchemaDigest string `json:"desired_schema_digest,omitempty"`
	SchemaMatches       bool   `json:"schema_matches"`
	Error               string `json:"error,omitempty"`
	ObservedAt          int64  `json:"observed_at"`
}

func newState() *State {
	s := &State{Version: StateVersion}
	s.normalize()
	return s
}

func (s *State) normalize() {
	if s.AppliedRevision.Resources == nil {
		s.AppliedRevision.Resources = map[string]ResourceState{}
	}
	if s.ResourceStatuses == nil {
		s.ResourceStatuses = map[string]ResourceStatus{}
	}
	if s.ApprovalRecords == nil {
		s.ApprovalRecords = map[string]ApprovalRecord{}
	}
	if s.RecoveryRecords == nil {
		s.RecoveryRecords = map[string]RecoveryRecord{}
	}
	if s.Observations == nil {
		s.Observations = map[string]Observation{}
	}
}

func (s *State) clone() *State {
	b, _ := json.Marshal(s)
	var c State
	_ = json.Unmarshal(b, &c)
	c.normalize()
	return &c
}

// ErrState marks a state.json that is missing where required, unreadable,
// malformed, of an unknown version, or replaced concurrently.
var ErrState = errors.New("cluster state")

// ledger is a state.json as read: its content and the ETag the next CAS
// must match ("" when the file is absent).
type ledger struct {
	state *State
	raw   []byte
	etag  string
}

// cas is the state CAS the plan reports: sha256 of the bytes read.
func (l *ledger) cas() string {
	if l.etag == "" {
		return ""
	}
	return "sha256:" + digest(l.raw)
}

func readState(ctx context.Context, st storage.Store) (*ledger, error) {
	raw, info, err := st.Get(ctx, stateKey)
	if errors.Is(err, storage.ErrNotFound) {
		return &ledger{state: newState()}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrState, stateKey, err)
	}
	s, err := decodeState(raw)
	if err != nil {
		return nil, err
	}
	return &ledger{state: s, raw: raw, etag: info.ETag}, nil
}

func decodeState(raw []byte) (*State, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s is not valid state JSON: %v", ErrState, stateKey, err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("%w: %s has version %d; this build reads version %d", ErrState, stateKey, s.Version, StateVersion)
	}
	s.normalize()
	return &s, nil
}

// writeState publishes next as the new ledger with one conditional put:
// PutIfAbsent when there was none, else PutIfMatch on the ETag read. A lost
// race is ErrState (state_conflict) and nothing is written.
func writeState(ctx context.Context, st storage.Store, prev *ledger, next *State) (*ledger, error) {
	raw, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return nil, err
	}
	raw = append(raw, '\n')
	var info storage.Info
	if prev.etag == "" {
		info, err = st.PutIfAbsent(ctx, stateKey, raw)
	} else {
		info, err = st.PutIfMatch(ctx, stateKey, raw, prev.etag)
	}
	if errors.Is(err, storage.ErrExists) || errors.Is(err, storage.ErrPrecondition) || errors.Is(err, storage.ErrNotFound) {
		// A retried conditional put may report a lost race that it won:
		// the ledger then holds exactly our bytes.
		if cur, _, gerr := st.Get(ctx, stateKey); gerr == nil && bytes.Equal(cur, raw) {
			return &ledger{state: next, raw: raw, etag: ""}, nil
		}
		return nil, fmt.Errorf("%w: %s changed while this command ran (another cluster command won); re-run it", ErrState, stateKey)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: write %s: %w", ErrState, stateKey, err)
	}
	return &ledger{state: next, raw: raw, etag: info.ETag}, nil
}
