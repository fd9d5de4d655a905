package cluster

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// Apply converges the cluster to the config: under the lock it sweeps
// recovery sidecars, recomputes the plan and executes every change whose
// disposition is applied — graph creates first, then catalog payloads, then
// one state CAS that publishes all of it, then the removal of approved
// deleted graphs. A crash or error before the CAS leaves the previous
// applied state in force (graphs created so far are adopted by the next
// apply); after it, the new state is complete.
func Apply(ctx context.Context, dir, actor string, o Options) *ApplyReport {
	r := &ApplyReport{Report: Report{Command: "apply", Config: dir}, Actor: actor, Changes: []Change{}}
	defer r.finish()
	s, led, release := openLocked(ctx, dir, "apply", &r.Report, o)
	if s == nil {
		return r
	}
	defer release()
	r.StateRevision, r.ConfigDigest = led.state.StateRevision, led.state.AppliedRevision.ConfigDigest
	if led.etag == "" {
		r.add(errorf(CodeStateMissing, "", "no %s: run `omnigraph cluster import --config %s` first", stateKey, dir))
		return r
	}
	sweep, records := sweepRecoveries(ctx, s.st, led, o)
	r.add(sweep...)
	changes, _, diags := computePlan(ctx, s.d, led, s.st, o)
	r.add(diags...)
	d := s.d
	failed := map[string]bool{} // graph ids whose create failed
	var creates []*recovery

	// 1. Graph creates, each fenced by a sidecar.
	for i := range changes {
		c := &changes[i]
		if !strings.HasPrefix(c.Resource, "graph.") || c.Action != ActionCreate || c.Disposition != DispositionApplied || c.Adopt {
			continue
		}
		id := strings.TrimPrefix(c.Resource, "graph.")
		g := d.Graphs[id]
		rec := &recovery{Operation: opGraphCreate, Graph: id, Root: g.URI, SchemaDigest: d.Resources[schemaAddr(id)].Digest, Actor: actor}
		if err := writeRecovery(ctx, s.st, rec); err != nil {
			r.add(errorf(CodeStorage, c.Resource, "write recovery sidecar: %v", err))
			failed[id] = true
			continue
		}
		creates = append(creates, rec)
		if err := failpoint.Hit("cluster/before-graph-init"); err != nil {
			r.add(errorf(CodeGraphCreateFailed, c.Resource, "%v", err))
			failed[id] = true
			continue
		}
		if _, err := omnigraph.Init(ctx, g.URI, g.SchemaFile, g.SchemaSource, actor, o.GraphOptions); err != nil {
			r.add(errorf(CodeGraphCreateFailed, c.Resource, "initialize %s: %v", g.URI, err))
			failed[id] = true
			continue
		}
		if err := failpoint.Hit("cluster/after-graph-init"); err != nil {
			r.add(errorf(CodeGraphCreateFailed, c.Resource, "%v", err))
			failed[id] = true
			continue
		}
	}
	// A failed create demotes its subtree and the policies bound to it.
	for i := range changes {
		c := &changes[i]
		if c.Disposition != DispositionApplied {
			continue
		}
		if id, ok := resourceGraph(c.Resource); ok && failed[id] && c.Action != ActionDelete {
			c.Disposition, c.Reason = DispositionBlocked, CodeGraphCreateFailed
		}
		if strings.HasPrefix(c.Resource, "policy.") {
			for _, scope := range d.Resources[c.Resource].AppliesTo {
				if gid, ok := strings.CutPrefix(scope, "graph."); ok && failed[gid] {
					c.Disposition, c.Reason = DispositionBlocked, CodeDependencyBlocked+": "+scope+" was not created"
				}
			}
		}
	}

	if len(failed) > 0 {
		// A failed run publishes nothing: graphs created so far are adopted
		// by the next apply, whose sweep also resolves their sidecars.
		r.Changes = changes
		return r
	}

	// 2. Catalog payloads, content-addressed, before the state that names them.
	for _, c := range changes {
		if c.Disposition != DispositionApplied || c.Action == ActionDelete {
			continue
		}
		key, ok := catalogKey(c.Resource, c.ToDigest)
		if !ok {
			continue
		}
		if err := publishPayload(ctx, s.st, key, []byte(payloadOf(d, c.Resource))); err != nil {
			r.add(errorf(CodeStorage, c.Resource, "publish %s: %v", key, err))
			r.Changes = changes
			return r
		}
	}

	// 3. Approved deletes: sidecars first, so the root is removed even if we
	// crash right after the state write.
	approvals := map[string]*Approval{}
	var ignored []Diagnostic
	for res, a := range validApprovals(ctx, s.st, d, led, &ignored) {
		approvals[res] = a
	}
	var deletes []*recovery
	for _, c := range changes {
		if strings.HasPrefix(c.Resource, "graph.") && c.Action == ActionDelete && c.Disposition == DispositionApplied {
			id := strings.TrimPrefix(c.Resource, "graph.")
			rec := &recovery{Operation: opGraphDelete, Graph: id, Root: GraphURI(d.Root, id), Actor: actor}
			if err := writeRecovery(ctx, s.st, rec); err != nil {
				r.add(errorf(CodeStorage, c.Resource, "write recovery sidecar: %v", err))
				r.Changes = changes
				return r
			}
			deletes = append(deletes, rec)
		}
	}

	// 4. The next ledger.
	next := led.state.clone()
	res := next.AppliedRevision.Resources
	now := nowFunc().UnixMicro()
	for _, c := range changes {
		st := ResourceStatus{Status: StatusApplied, Conditions: []string{}}
		switch c.Disposition {
		case DispositionApplied, DispositionDerived:
			if c.Action == ActionDelete {
				delete(res, c.Resource)
				delete(next.ResourceStatuses, c.Resource)
				if a, ok := approvals[c.Resource]; ok {
					next.ApprovalRecords[a.ApprovalID] = ApprovalRecord{Resource: a.Resource, Actor: a.Actor, ApprovedAt: a.CreatedAt, ConsumedAt: now}
				}
				continue
			}
			res[c.Resource] = d.Resources[c.Resource]
		case DispositionDeferred:
			st = ResourceStatus{Status: StatusBlocked, Conditions: []string{CodeUnsupportedChange}, Message: c.Reason}
		default:
			st = ResourceStatus{Status: StatusBlocked, Conditions: []string{firstWord(c.Reason)}, Message: c.Reason}
		}
		next.ResourceStatuses[c.Resource] = st
	}
	for id, rec := range records {
		next.RecoveryRecords[id] = rec
	}
	r.Converged = converged(changes) && !hasErrors(r.Diagnostics)
	if r.Converged {
		next.AppliedRevision.ConfigDigest = d.ConfigDigest()
		for addr := range d.Resources {
			next.ResourceStatuses[addr] = ResourceStatus{Status: StatusApplied, Conditions: []string{}}
		}
	}
	r.Changes = changes
	if sameState(led.state, next) && len(creates) == 0 && len(deletes) == 0 {
		r.ConfigDigest = next.AppliedRevision.ConfigDigest
		return r // converged already: no write, no revision change
	}
	next.StateRevision++
	if err := failpoint.Hit("cluster/before-state-cas"); err != nil {
		r.add(errorf(CodeStorage, "", "publish %s: %v", stateKey, err))
		r.Converged = false
		return r
	}
	if _, err := writeState(ctx, s.st, led, next); err != nil {
		r.add(errorf(CodeStateConflict, "", "%v", err))
		r.Converged = false
		return r
	}
	r.StateWritten, r.StateRevision, r.ConfigDigest = true, next.StateRevision, next.AppliedRevision.ConfigDigest
	if err := failpoint.Hit("cluster/after-state-cas"); err != nil {
		r.add(errorf(CodeStorage, "", "after publishing %s: %v", stateKey, err))
		return r
	}

	// 5. After the publish: retire sidecars, remove deleted roots, consume approvals.
	for _, rec := range creates {
		_ = s.st.Delete(ctx, rec.key())
	}
	for _, rec := range deletes {
		if err := deleteRoot(ctx, s.st, d.Root, rec.Graph); err != nil {
			r.add(warnf(CodeGraphDeleteFailed, graphAddr(rec.Graph), "remove %s: %v (the next apply finishes it)", rec.Root, err))
			continue
		}
		_ = s.st.Delete(ctx, rec.key())
	}
	for _, a := range approvals {
		if _, deleted := next.ApprovalRecords[a.ApprovalID]; deleted {
			a.ConsumedAt = now
			raw, _ := jsonIndent(a)
			_, _ = s.st.Put(ctx, a.key(), raw)
		}
	}
	return r
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, ": "); i > 0 {
		return s[:i]
	}
	return s
}

// sameState compares ledgers ignoring the revision.
func sameState(a, b *State) bool {
	x, y := *a, *b
	x.StateRevision, y.StateRevision = 0, 0
	ja, _ := json.Marshal(&x)
	jb, _ := json.Marshal(&y)
	return string(ja) == string(jb)
}

// payloadOf returns the catalog payload of a query or policy resource.
func payloadOf(d *Desired, addr string) string {
	if strings.HasPrefix(addr, "policy.") {
		return d.Policies[strings.TrimPrefix(addr, "policy.")].Source
	}
	rest := strings.TrimPrefix(addr, "query.")
	i := strings.IndexByte(rest, '.')
	return d.Graphs[rest[:i]].Queries[rest[i+1:]].Source
}
