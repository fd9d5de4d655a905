package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

func changeSummary(cs []Change) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Action+" "+c.Resource+" "+c.Disposition)
	}
	return strings.Join(out, "\n")
}

func TestLifecycle(t *testing.T) {
	ctx := t.Context()
	dir := writeCluster(t, nil)
	o := Options{}

	p := Plan(ctx, dir, o)
	mustOK(t, p.Report)
	if p.StatePresent || !strings.Contains(codes(p.Diagnostics), "warning:"+CodeStateMissing) {
		t.Errorf("plan without state: %+v", p.Diagnostics)
	}
	want := "create graph.knowledge applied\ncreate schema.knowledge applied\ncreate query.knowledge.add_person applied\ncreate query.knowledge.get_person applied\ncreate policy.base applied"
	if got := changeSummary(p.Changes); got != want {
		t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
	}
	if !p.LockAcquired || p.AcquiredLockID == "" {
		t.Error("plan did not report the lock it took")
	}
	if _, err := os.Stat(filepath.Join(dir, lockKey)); !os.IsNotExist(err) {
		t.Error("plan left the lock behind")
	}

	a := Apply(ctx, dir, "act-op", o)
	if a.OK || !strings.Contains(codes(a.Diagnostics), "error:"+CodeStateMissing) {
		t.Fatalf("apply without state: %+v", a.Diagnostics)
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs")); !os.IsNotExist(err) {
		t.Fatal("a refused apply created graphs")
	}

	imp := Import(ctx, dir, o)
	mustOK(t, imp.Report)
	if !imp.StateWritten || imp.StateRevision != 1 || imp.Observations["graph.knowledge"].Exists {
		t.Fatalf("import: %+v", imp)
	}
	if again := Import(ctx, dir, o); again.OK || !strings.Contains(codes(again.Diagnostics), CodeStateExists) {
		t.Fatalf("second import: %+v", again.Diagnostics)
	}

	a = Apply(ctx, dir, "act-op", o)
	mustOK(t, a.Report)
	if !a.Converged || !a.StateWritten || a.StateRevision != 2 {
		t.Fatalf("apply: converged=%v written=%v rev=%d %v", a.Converged, a.StateWritten, a.StateRevision, a.Diagnostics)
	}
	uri := filepath.Join(dir, "graphs", "knowledge.omni")
	g, err := omnigraph.Open(ctx, uri, omnigraph.Options{})
	if err != nil {
		t.Fatalf("graph not created at the derived root: %v", err)
	}
	if src, _ := g.SchemaSource(ctx, omnigraph.Target{}); src != testSchema {
		t.Errorf("created graph schema %q", src)
	}
	if log, _ := g.Log(ctx, "main", 1); len(log) != 1 || log[0].Actor != "act-op" {
		t.Errorf("init commit %+v, want actor act-op", log)
	}
	for _, rel := range []string{"__cluster/resources/policy/base/" + digest([]byte(testPolicy)) + ".yaml",
		"__cluster/resources/query/knowledge/get_person/" + digest([]byte(testQueries)) + ".gq"} {
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Errorf("catalog payload %s: %v", rel, err)
		}
	}

	// Idempotent: nothing to do, nothing written.
	before := readRaw(t, dir, stateKey)
	a = Apply(ctx, dir, "act-op", o)
	mustOK(t, a.Report)
	if a.StateWritten || !a.Converged || a.StateRevision != 2 || len(a.Changes) != 0 {
		t.Fatalf("converged apply: %+v", a)
	}
	if readRaw(t, dir, stateKey) != before {
		t.Fatal("converged apply rewrote state")
	}
	if p := Plan(ctx, dir, o); !p.Converged || len(p.Changes) != 0 || p.StateCAS != "sha256:"+digest([]byte(before)) {
		t.Fatalf("plan after apply: %s cas %s", changeSummary(p.Changes), p.StateCAS)
	}

	st := Status(ctx, dir, o)
	mustOK(t, st.Report)
	if !st.StatePresent || st.StateRevision != 2 || st.Locked || len(st.Resources) != 5 {
		t.Fatalf("status: %+v", st)
	}

	app, err := LoadApplied(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Graphs) != 1 || app.Graphs[0].URI != uri || len(app.Graphs[0].Queries) != 2 || app.Graphs[0].Policy == nil || app.Server != nil {
		t.Fatalf("applied: %+v", app.Graphs[0])
	}

	// A query edit is one update; the server sees it only after apply.
	edited := strings.Replace(testQueries, "$p.name, $p.age", "$p.name", 1)
	writeFile(t, dir, "queries/people.gq", edited)
	p = Plan(ctx, dir, o)
	if got := changeSummary(p.Changes); got != "update query.knowledge.add_person applied\nupdate query.knowledge.get_person applied" {
		t.Fatalf("plan after edit:\n%s", got)
	}
	if app, _ := LoadApplied(ctx, dir, o); app.Graphs[0].Queries[1].Source != testQueries {
		t.Fatal("unapplied edit leaked into the applied state")
	}
	mustOK(t, Apply(ctx, dir, "act-op", o).Report)
	if app, _ := LoadApplied(ctx, dir, o); app.Graphs[0].Queries[1].Source != edited {
		t.Fatal("applied edit not served")
	}

	// A binding change alone is an update marked binding_change.
	writeFile(t, dir, "cluster.yaml", strings.Replace(withScratch, "applies_to: [knowledge]", "applies_to: [knowledge, scratch]", 1))
	p = Plan(ctx, dir, o)
	if got := changeSummary(p.Changes); got != "create graph.scratch applied\ncreate schema.scratch applied\nupdate policy.base applied" || !p.Changes[2].BindingChange {
		t.Fatalf("plan with new graph and binding:\n%s", got)
	}
	mustOK(t, Apply(ctx, dir, "act-op", o).Report)

	// Removing a graph is gated by an approval.
	writeFile(t, dir, "cluster.yaml", testClusterYAML)
	p = Plan(ctx, dir, o)
	if got := changeSummary(p.Changes); got != "delete graph.scratch blocked\ndelete schema.scratch blocked\nupdate policy.base applied" || strings.Join(p.ApprovalsRequired, ",") != "graph.scratch" {
		t.Fatalf("plan with removed graph:\n%s\napprovals %v", got, p.ApprovalsRequired)
	}
	a = Apply(ctx, dir, "act-op", o)
	mustOK(t, a.Report)
	if a.Converged {
		t.Fatal("apply converged with an unapproved delete")
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs", "scratch.omni")); err != nil {
		t.Fatal("unapproved delete removed the graph")
	}
	if r := Approve(ctx, dir, "graph.scratch", "", o); r.OK || !strings.Contains(codes(r.Diagnostics), CodeActorRequired) {
		t.Fatalf("approve without actor: %v", r.Diagnostics)
	}
	if r := Approve(ctx, dir, "graph.knowledge", "act-op", o); r.OK {
		t.Fatal("approved a change that is not gated")
	}
	ar := Approve(ctx, dir, "graph.scratch", "act-op", o)
	mustOK(t, ar.Report)
	p = Plan(ctx, dir, o)
	if got := changeSummary(p.Changes); got != "delete graph.scratch applied\ndelete schema.scratch applied" {
		t.Fatalf("plan after approval:\n%s", got)
	}
	a = Apply(ctx, dir, "act-op", o)
	mustOK(t, a.Report)
	if !a.Converged {
		t.Fatalf("apply after approval: %+v", a)
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs", "scratch.omni")); !os.IsNotExist(err) {
		t.Fatal("approved delete left the graph root")
	}
	if !strings.Contains(readRaw(t, dir, approvalPrefix+ar.Approval.ApprovalID+".json"), "consumed_at") {
		t.Error("approval not marked consumed")
	}
	if s := Status(ctx, dir, o); len(s.Resources) != 5 {
		t.Errorf("status after delete: %v", s.Resources)
	}
}

func TestApprovalGoesStale(t *testing.T) {
	ctx := t.Context()
	dir := approvedScratchDelete(t)
	// Any config drift after approving invalidates the approval.
	writeFile(t, dir, "queries/people.gq", strings.Replace(testQueries, "$p.name, $p.age", "$p.name", 1))
	p := Plan(ctx, dir, Options{})
	if !strings.Contains(codes(p.Diagnostics), "warning:"+CodeApprovalStale) || strings.Join(p.ApprovalsRequired, ",") != "graph.scratch" {
		t.Fatalf("stale approval honoured: %v %v", p.Diagnostics, p.ApprovalsRequired)
	}
}

func TestLockAndForceUnlock(t *testing.T) {
	ctx := t.Context()
	dir := writeCluster(t, nil)
	mustOK(t, Import(ctx, dir, Options{}).Report)
	st, err := Options{}.open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := acquireLock(ctx, st, "apply", 4242)
	if err != nil {
		t.Fatal(err)
	}
	a := Apply(ctx, dir, "op", Options{})
	if a.OK || !strings.Contains(codes(a.Diagnostics), CodeStateLocked) || !strings.Contains(a.Diagnostics[0].Message, l.LockID) {
		t.Fatalf("apply under a held lock: %v", a.Diagnostics)
	}
	s := Status(ctx, dir, Options{})
	if !s.Locked || s.Lock.LockID != l.LockID || s.Lock.LockPID != 4242 || !s.OK {
		t.Fatalf("status: %+v", s)
	}
	if r := ForceUnlock(ctx, dir, "01WRONG", Options{}); r.OK || r.Removed || !strings.Contains(codes(r.Diagnostics), CodeLockMismatch) {
		t.Fatalf("force-unlock wrong id: %+v", r)
	}
	if r := ForceUnlock(ctx, dir, l.LockID, Options{}); !r.OK || !r.Removed {
		t.Fatalf("force-unlock: %+v", r)
	}
	if r := ForceUnlock(ctx, dir, l.LockID, Options{}); r.OK || !strings.Contains(codes(r.Diagnostics), CodeLockMissing) {
		t.Fatalf("force-unlock without lock: %+v", r)
	}
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)
}

func TestRefreshDriftConverges(t *testing.T) {
	ctx := t.Context()
	dir := writeCluster(t, nil)
	mustOK(t, Import(ctx, dir, Options{}).Report)
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)

	// A tampered catalog payload: status warns, boot refuses, refresh marks
	// drift and apply republishes.
	key := "__cluster/resources/query/knowledge/get_person/" + digest([]byte(testQueries)) + ".gq"
	writeFile(t, dir, key, "query tampered() { match { $p: Person } return { $p.name } }\n")
	if s := Status(ctx, dir, Options{}); !strings.Contains(codes(s.Diagnostics), "warning:"+CodePayloadMismatch) {
		t.Fatalf("status missed tampering: %v", s.Diagnostics)
	}
	if _, err := LoadApplied(ctx, dir, Options{}); err == nil {
		t.Fatal("booted from a tampered catalog")
	}
	mustOK(t, Refresh(ctx, dir, Options{}).Report)
	if p := Plan(ctx, dir, Options{}); changeSummary(p.Changes) != "create query.knowledge.get_person applied" {
		t.Fatalf("plan after refresh: %s", changeSummary(p.Changes))
	}
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)
	if _, err := LoadApplied(ctx, dir, Options{}); err != nil {
		t.Fatalf("boot after repair: %v", err)
	}

	// A vanished graph root: refresh records drift, the plan re-creates it.
	if err := os.RemoveAll(filepath.Join(dir, "graphs", "knowledge.omni")); err != nil {
		t.Fatal(err)
	}
	r := Refresh(ctx, dir, Options{})
	mustOK(t, r.Report)
	if !strings.Contains(codes(r.Diagnostics), "warning:"+CodeGraphMissing) || r.Observations["graph.knowledge"].Exists {
		t.Fatalf("refresh: %+v", r)
	}
	if p := Plan(ctx, dir, Options{}); changeSummary(p.Changes) != "create graph.knowledge applied\ncreate schema.knowledge applied" {
		t.Fatalf("plan after lost root:\n%s", changeSummary(p.Changes))
	}
	a := Apply(ctx, dir, "op", Options{})
	mustOK(t, a.Report)
	if !a.Converged {
		t.Fatal("not converged")
	}
}

// TestSchemaChangeIsDeferred: this build cannot migrate a live graph, so a
// schema edit is reported, not executed, and the queries that depend on it
// wait.
func TestSchemaChangeIsDeferred(t *testing.T) {
	ctx := t.Context()
	dir := writeCluster(t, nil)
	mustOK(t, Import(ctx, dir, Options{}).Report)
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)
	writeFile(t, dir, "knowledge.pg", testSchema+"\nnode Company {\n    name: String @key\n}\n")
	p := Plan(ctx, dir, Options{})
	if got := changeSummary(p.Changes); got != "update schema.knowledge deferred" {
		t.Fatalf("plan: %s", got)
	}
	a := Apply(ctx, dir, "op", Options{})
	mustOK(t, a.Report)
	if a.Converged {
		t.Fatal("converged over a deferred schema change")
	}
	if !strings.Contains(codes(a.Diagnostics), "warning:"+CodeUnsupportedChange) {
		t.Errorf("diagnostics %v", a.Diagnostics)
	}
}
