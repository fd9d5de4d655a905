package cluster

// Report is the part every cluster command's --json output shares.
type Report struct {
	OK          bool         `json:"ok"`
	Command     string       `json:"command"`
	Config      string       `json:"config"`
	StorageRoot string       `json:"storage_root,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

func (r *Report) add(ds ...Diagnostic) { r.Diagnostics = append(r.Diagnostics, ds...) }

// finish sets OK from the diagnostics; the --json exporter relies on
// Diagnostics being a list, never null.
func (r *Report) finish() {
	if r.Diagnostics == nil {
		r.Diagnostics = []Diagnostic{}
	}
	r.OK = !hasErrors(r.Diagnostics)
}

// ValidateReport is `cluster validate`.
type ValidateReport struct {
	Report
	Graphs    []string `json:"graphs"`
	Resources []string `json:"resources"`
}

// StateObservations reports the lock as plan found it.
type StateObservations struct {
	Locked bool `json:"locked"`
	*LockInfo
}

// PlanReport is `cluster plan`.
type PlanReport struct {
	Report
	StateCAS          string            `json:"state_cas"`
	StateRevision     int64             `json:"state_revision"`
	StatePresent      bool              `json:"state_present"`
	ConfigDigest      string            `json:"config_digest"`
	Changes           []Change          `json:"changes"`
	ApprovalsRequired []string          `json:"approvals_required"`
	StateObservations StateObservations `json:"state_observations"`
	LockAcquired      bool              `json:"lock_acquired"`
	AcquiredLockID    string            `json:"acquired_lock_id,omitempty"`
	Converged         bool              `json:"converged"`
}

// ApplyReport is `cluster apply`.
type ApplyReport struct {
	Report
	Actor         string   `json:"actor,omitempty"`
	Changes       []Change `json:"changes"`
	StateWritten  bool     `json:"state_written"`
	StateRevision int64    `json:"state_revision"`
	ConfigDigest  string   `json:"config_digest"`
	Converged     bool     `json:"converged"`
}

// ObserveReport is `cluster import` and `cluster refresh`.
type ObserveReport struct {
	Report
	StateWritten  bool                   `json:"state_written"`
	StateRevision int64                  `json:"state_revision"`
	Observations  map[string]Observation `json:"observations"`
}

// StatusReport is `cluster status`.
type StatusReport struct {
	Report
	StatePresent      bool                      `json:"state_present"`
	StateRevision     int64                     `json:"state_revision"`
	ConfigDigest      string                    `json:"config_digest"`
	Resources         map[string]ResourceState  `json:"resources"`
	ResourceStatuses  map[string]ResourceStatus `json:"resource_statuses"`
	Locked            bool                      `json:"locked"`
	Lock              *LockInfo                 `json:"lock,omitempty"`
	PendingRecoveries []string                  `json:"pending_recoveries"`
}

// ApproveReport is `cluster approve`.
type ApproveReport struct {
	Report
	Approval *Approval `json:"approval,omitempty"`
}

// UnlockReport is `cluster force-unlock`.
type UnlockReport struct {
	Report
	LockID  string `json:"lock_id"`
	Removed bool   `json:"removed"`
}
