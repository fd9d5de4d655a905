package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Validate checks the config directory without touching storage.
func Validate(ctx context.Context, dir string) *ValidateReport {
	r := &ValidateReport{Report: Report{Command: "validate", Config: dir}, Graphs: []string{}, Resources: []string{}}
	d, diags := LoadDesired(dir)
	r.add(diags...)
	if d != nil {
		r.StorageRoot = d.Root
		r.Graphs = sortedKeys(d.Graphs)
		r.Resources = sortedKeys(d.Resources)
	}
	r.finish()
	return r
}

// session is a validated config with its storage open.
type session struct {
	d  *Desired
	st storage.Store
}

func openSession(ctx context.Context, dir string, r *Report, o Options) *session {
	d, diags := LoadDesired(dir)
	r.add(diags...)
	if d == nil {
		return nil
	}
	st := openRoot(ctx, d.Root, r, o)
	if st == nil {
		return nil
	}
	return &session{d: d, st: st}
}

// openRoot opens the storage root for r (naming it in r.StorageRoot); nil,
// with the failure recorded in r, when it cannot.
func openRoot(ctx context.Context, root string, r *Report, o Options) storage.Store {
	r.StorageRoot = root
	st, err := o.open(ctx, root)
	if err != nil {
		r.add(errorf(CodeStorage, "", "open storage root %s: %v", root, err))
		return nil
	}
	return st
}

// openConfigRoot is openRoot for the commands that need only the storage
// root of the config in dir (configRoot), not a valid desired state.
func openConfigRoot(ctx context.Context, dir string, r *Report, o Options) storage.Store {
	root, _, diags := configRoot(dir)
	r.add(diags...)
	if root == "" {
		return nil
	}
	return openRoot(ctx, root, r, o)
}

// readLedger reads the state ledger; nil, with the failure recorded in r,
// when it cannot.
func readLedger(ctx context.Context, st storage.Store, r *Report) *ledger {
	led, err := readState(ctx, st)
	if err != nil {
		r.add(stateDiag(err))
		return nil
	}
	return led
}

// openLocked is how a state-mutating command starts: it opens the session,
// takes the state lock for op and reads the ledger. On failure it records
// why in r, holds no lock and returns a nil session; otherwise the caller
// defers release.
func openLocked(ctx context.Context, dir, op string, r *Report, o Options) (*session, *ledger, func()) {
	s := openSession(ctx, dir, r, o)
	if s == nil {
		return nil, nil, nil
	}
	_, release, ok := s.lock(ctx, op, r, o)
	if !ok {
		return nil, nil, nil
	}
	led := readLedger(ctx, s.st, r)
	if led == nil {
		release()
		return nil, nil, nil
	}
	return s, led, release
}

// lock takes the state lock when the config enables it. It returns the
// release function (a no-op when locking is off) or records the failure.
func (s *session) lock(ctx context.Context, op string, r *Report, o Options) (*Lock, func(), bool) {
	if !s.d.Config.lockEnabled() {
		return nil, func() {}, true
	}
	l, release, err := acquireLock(ctx, s.st, op, o.PID)
	if err != nil {
		code := CodeStorage
		if errors.Is(err, ErrLocked) {
			code = CodeStateLocked
		}
		r.add(errorf(code, "", "%v", err))
		return nil, nil, false
	}
	return l, release, true
}

func stateDiag(err error) Diagnostic {
	return errorf(CodeStateInvalid, "", "%v", err)
}

// Plan previews apply: validate, then diff desired digests against the
// ledger. It never writes state (it takes and releases the lock).
func Plan(ctx context.Context, dir string, o Options) *PlanReport {
	r := &PlanReport{Report: Report{Command: "plan", Config: dir}, Changes: []Change{}, ApprovalsRequired: []string{}}
	defer r.finish()
	s := openSession(ctx, dir, &r.Report, o)
	if s == nil {
		return r
	}
	r.ConfigDigest = s.d.ConfigDigest()
	if s.d.Config.lockEnabled() {
		if held, err := readLock(ctx, s.st); err == nil {
			r.StateObservations = StateObservations{Locked: true, LockInfo: held.info(nowFunc())}
		}
	}
	l, release, ok := s.lock(ctx, "plan", &r.Report, o)
	if !ok {
		return r
	}
	defer release()
	if l != nil {
		r.LockAcquired, r.AcquiredLockID = true, l.LockID
	}
	led := readLedger(ctx, s.st, &r.Report)
	if led == nil {
		return r
	}
	r.StateCAS, r.StateRevision, r.StatePresent = led.cas(), led.state.StateRevision, led.etag != ""
	if !r.StatePresent {
		r.add(warnf(CodeStateMissing, "", "no %s yet: every resource is planned as a create; run `omnigraph cluster import` before apply", stateKey))
	}
	for _, rec := range sortedRecoveries(ctx, s.st) {
		r.add(warnf(CodeRecoveryPending, graphAddr(rec.Graph), "an interrupted %s left %s; the next apply, import or refresh resolves it", rec.Operation, rec.key()))
	}
	changes, approvals, diags := computePlan(ctx, s.d, led, s.st, o)
	r.Changes, r.ApprovalsRequired = changes, approvals
	if r.ApprovalsRequired == nil {
		r.ApprovalsRequired = []string{}
	}
	r.add(diags...)
	r.Converged = len(changes) == 0
	return r
}

func sortedRecoveries(ctx context.Context, st storage.Store) []*recovery {
	rs, _ := listRecoveries(ctx, st)
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	return rs
}

// configRoot reads just enough of a config directory (or takes a storage
// URI) to find the storage root, for commands that do not need a valid
// desired state (status, force-unlock).
func configRoot(dir string) (string, *Config, []Diagnostic) {
	if isScheme(dir) {
		return dir, nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return "", nil, []Diagnostic{errorf(CodeConfigMissing, "", "no %s in %s: %v", ConfigFile, dir, err)}
	}
	c, diags := parseConfig(data)
	if c == nil || hasErrors(diags) {
		return "", nil, diags
	}
	return storageRoot(dir, c), c, diags
}

// Status reports the ledger, the lock and catalog integrity. Read-only; it
// never takes the lock.
func Status(ctx context.Context, dir string, o Options) *StatusReport {
	r := &StatusReport{Report: Report{Command: "status", Config: dir}, Resources: map[string]ResourceState{},
		ResourceStatuses: map[string]ResourceStatus{}, PendingRecoveries: []string{}}
	defer r.finish()
	st := openConfigRoot(ctx, dir, &r.Report, o)
	if st == nil {
		return r
	}
	if held, err := readLock(ctx, st); err == nil {
		r.Locked, r.Lock = true, held.info(nowFunc())
	} else if !errors.Is(err, storage.ErrNotFound) {
		r.Locked = true
		r.add(warnf(CodeLockInvalid, "", "%v", err))
	}
	for _, rec := range sortedRecoveries(ctx, st) {
		r.PendingRecoveries = append(r.PendingRecoveries, rec.key())
		r.add(warnf(CodeRecoveryPending, graphAddr(rec.Graph), "pending %s sidecar %s", rec.Operation, rec.key()))
	}
	led := readLedger(ctx, st, &r.Report)
	if led == nil {
		return r
	}
	if led.etag == "" {
		r.add(warnf(CodeStateMissing, "", "no %s: nothing has been imported or applied", stateKey))
		return r
	}
	r.StatePresent, r.StateRevision = true, led.state.StateRevision
	r.ConfigDigest = led.state.AppliedRevision.ConfigDigest
	r.Resources, r.ResourceStatuses = led.state.AppliedRevision.Resources, led.state.ResourceStatuses
	for _, p := range verifyCatalog(ctx, st, led.state) {
		r.add(p.diag)
	}
	return r
}

// ForceUnlock removes the lock only if its id is lockID.
func ForceUnlock(ctx context.Context, dir, lockID string, o Options) *UnlockReport {
	r := &UnlockReport{Report: Report{Command: "force-unlock", Config: dir}, LockID: lockID}
	defer r.finish()
	st := openConfigRoot(ctx, dir, &r.Report, o)
	if st == nil {
		return r
	}
	held, err := readLock(ctx, st)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		r.add(errorf(CodeLockMissing, "", "no lock is held (%s does not exist)", lockKey))
		return r
	case err != nil:
		r.add(errorf(CodeLockInvalid, "", "%v; the file is left untouched", err))
		return r
	case held.LockID != lockID:
		r.add(errorf(CodeLockMismatch, "", "the held lock is %s (%s), not %s; nothing removed", held.LockID, held.Operation, lockID))
		return r
	}
	if err := st.Delete(ctx, lockKey); err != nil {
		r.add(errorf(CodeStorage, "", "remove %s: %v", lockKey, err))
		return r
	}
	r.Removed = true
	return r
}

// Approve records an approval for a gated change of the current plan.
func Approve(ctx context.Context, dir, resource, actor string, o Options) *ApproveReport {
	r := &ApproveReport{Report: Report{Command: "approve", Config: dir}}
	defer r.finish()
	if actor == "" {
		r.add(errorf(CodeActorRequired, resource, "approve needs an actor: pass --as ACTOR or set operator.actor in the operator config"))
		return r
	}
	s := openSession(ctx, dir, &r.Report, o)
	if s == nil {
		return r
	}
	led := readLedger(ctx, s.st, &r.Report)
	if led == nil {
		return r
	}
	changes, approvals, _ := computePlan(ctx, s.d, led, s.st, o)
	gated := false
	for _, a := range approvals {
		gated = gated || a == resource
	}
	if !gated {
		for _, c := range changes {
			if c.Resource == resource && c.Action == ActionDelete && c.Disposition == DispositionApplied {
				r.add(warnf(CodeApprovalNotNeeded, resource, "already approved (%s)", c.Reason))
				return r
			}
		}
		r.add(errorf(CodeApprovalNotNeeded, resource, "the current plan has no change of %s that needs approval (approvals gate graph deletes: graph.<id>)", resource))
		return r
	}
	id, _ := resourceGraph(resource)
	a := newApproval(resource, actor, s.d.ConfigDigest(), subtreeDigest(led.state, id))
	raw, _ := jsonIndent(a)
	if _, err := s.st.PutIfAbsent(ctx, a.key(), raw); err != nil {
		r.add(errorf(CodeStorage, resource, "write %s: %v", a.key(), err))
		return r
	}
	r.Approval = a
	return r
}
