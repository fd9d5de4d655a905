package cluster

import (
	"context"
	"sort"
)

// Import creates the first state.json from observations of the declared
// graph roots. It refuses when a ledger exists (use refresh) or when a root
// exists but cannot be read.
func Import(ctx context.Context, dir string, o Options) *ObserveReport {
	return observe(ctx, dir, o, true)
}

// Refresh updates the existing state.json from observations: missing roots
// and out-of-band schema changes become drift the next plan converges, and
// catalog payloads are re-verified.
func Refresh(ctx context.Context, dir string, o Options) *ObserveReport {
	return observe(ctx, dir, o, false)
}

func observe(ctx context.Context, dir string, o Options, isImport bool) *ObserveReport {
	cmd := "refresh"
	if isImport {
		cmd = "import"
	}
	r := &ObserveReport{Report: Report{Command: cmd, Config: dir}, Observations: map[string]Observation{}}
	defer r.finish()
	s, led, release := openLocked(ctx, dir, cmd, &r.Report, o)
	if s == nil {
		return r
	}
	defer release()
	r.StateRevision = led.state.StateRevision
	switch {
	case isImport && led.etag != "":
		r.add(errorf(CodeStateExists, "", "%s already exists; use `omnigraph cluster refresh`", stateKey))
		return r
	case !isImport && led.etag == "":
		r.add(errorf(CodeStateMissing, "", "no %s: run `omnigraph cluster import` first", stateKey))
		return r
	}
	sweep, records := sweepRecoveries(ctx, s.st, led, o)
	r.add(sweep...)
	next := led.state.clone()
	res := next.AppliedRevision.Resources
	for id, rec := range records {
		next.RecoveryRecords[id] = rec
	}
	now := nowFunc().UnixMicro()
	ids := map[string]bool{}
	for id := range s.d.Graphs {
		ids[id] = true
	}
	for addr := range res {
		if id, ok := resourceGraph(addr); ok {
			ids[id] = true
		}
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		addr := graphAddr(id)
		uri := GraphURI(s.d.Root, id)
		lg := observeGraph(ctx, s.st, id, uri, o.GraphOptions)
		want := s.d.Resources[schemaAddr(id)].Digest
		obs := Observation{Exists: lg.exists, GraphCommitID: lg.commitID, LiveSchemaDigest: lg.schemaDigest,
			DesiredSchemaDigest: want, SchemaMatches: lg.exists && lg.err == nil && want != "" && lg.schemaDigest == want, ObservedAt: now}
		switch {
		case lg.err != nil:
			obs.Error = lg.err.Error()
			r.add(errorf(CodeGraphUnreadable, addr, "%s: %v", uri, lg.err))
			next.ResourceStatuses[addr] = ResourceStatus{Status: StatusError, Conditions: []string{CodeGraphUnreadable}, Message: lg.err.Error()}
		case !lg.exists:
			if _, had := res[addr]; had {
				r.add(warnf(CodeGraphMissing, addr, "%s no longer exists; the next plan re-creates it (empty)", uri))
				next.ResourceStatuses[addr] = ResourceStatus{Status: StatusDrifted, Conditions: []string{CodeGraphMissing}}
			}
			delete(res, addr)
			delete(res, schemaAddr(id))
		default:
			if _, had := res[addr]; !had {
				if dr, ok := s.d.Resources[addr]; ok {
					res[addr] = dr
				}
			}
			if cur, had := res[schemaAddr(id)]; had && cur.Digest != lg.schemaDigest {
				r.add(warnf(CodeSchemaDrift, schemaAddr(id), "the live schema of %s changed outside the control plane", uri))
				next.ResourceStatuses[schemaAddr(id)] = ResourceStatus{Status: StatusDrifted, Conditions: []string{CodeSchemaDrift}}
			}
			res[schemaAddr(id)] = ResourceState{Digest: lg.schemaDigest}
		}
		next.Observations[addr] = obs
		r.Observations[addr] = obs
	}
	if !isImport {
		for _, p := range verifyCatalog(ctx, s.st, next) {
			r.add(p.diag)
			switch p.kind {
			case "missing", "mismatch":
				delete(res, p.addr)
				next.ResourceStatuses[p.addr] = ResourceStatus{Status: StatusDrifted, Conditions: []string{"payload_" + p.kind}}
			default:
				next.ResourceStatuses[p.addr] = ResourceStatus{Status: StatusError, Conditions: []string{"payload_read_error"}}
			}
		}
	}
	if isImport && hasErrors(r.Diagnostics) {
		return r // import creates no state from unreadable roots
	}
	next.StateRevision++
	if _, err := writeState(ctx, s.st, led, next); err != nil {
		r.add(errorf(CodeStateConflict, "", "%v", err))
		return r
	}
	r.StateWritten, r.StateRevision = true, next.StateRevision
	return r
}
