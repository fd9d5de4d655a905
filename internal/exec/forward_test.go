package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// forwardProcEnv carries a TestForwardHelper's job (forwardJob as JSON).
const forwardProcEnv = "OMNIGRAPH_FORWARD_PROC"

// forwardJob is one mutation a TestForwardHelper runs on the graph in Dir.
type forwardJob struct {
	Dir, Actor, Source, Name string
	Params                   map[string]any
}

// forwardReport is what a TestForwardHelper prints after its write.
type forwardReport struct {
	Commit   string `json:"commit"`
	Affected int64  `json:"affected"`
	Err      string `json:"err"`
}

const forwardTag = "omnigraph-forward-report "

// TestForwardHelper is not a test: it is a child process of the forwarding
// tests, one keyed update with its source (so it may be handed over).
func TestForwardHelper(t *testing.T) {
	spec := os.Getenv(forwardProcEnv)
	if spec == "" {
		t.Skip("child process of the forwarding tests")
	}
	var job forwardJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := Open(ctx, writersStore(t, job.Dir, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Mutate(ctx, "main", headPlan(t, g, job.Source, job.Name), job.Params, MutateOptions{Actor: job.Actor, Source: job.Source})
	var rep forwardReport
	if err != nil {
		rep.Err = err.Error()
	} else {
		rep.Affected = res.AffectedNodes
		if res.Commit != nil {
			rep.Commit = res.Commit.ID
		}
	}
	b, _ := json.Marshal(rep)
	fmt.Println(forwardTag + string(b))
}

// forwardChild starts a TestForwardHelper process.
type forwardChild struct {
	cmd  *osexec.Cmd
	out  strings.Builder
	done chan error
}

func startForwardChild(t *testing.T, job forwardJob, env ...string) *forwardChild {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &forwardChild{done: make(chan error, 1)}
	c.cmd = osexec.Command(bin, "-test.run=^TestForwardHelper$", "-test.count=1")
	spec, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Env = append(append(os.Environ(), forwardProcEnv+"="+string(spec)), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait returns the child's exit code and report (nil if it printed none).
func (c *forwardChild) wait(t *testing.T) (int, *forwardReport) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("child did not finish:\n%s", c.out.String())
	}
	for _, line := range strings.Split(c.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, forwardTag); ok {
			var r forwardReport
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return c.cmd.ProcessState.ExitCode(), &r
		}
	}
	return c.cmd.ProcessState.ExitCode(), nil
}

// waitForFile waits until glob matches a file.
func waitForFile(t *testing.T, glob string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if m, _ := filepath.Glob(glob); len(m) > 0 {
			return
		}
	}
	t.Fatalf("nothing matched %s", glob)
}

// TestForwardedWrite: a process whose branch's turn another process holds
// hands its mutation to that process, which commits it on top of its own
// write with its one CAS; and when the holder dies at each step of that,
// the proposer's write lands exactly once and the proposer reports it
// truly.
func TestForwardedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocesses")
	}
	cases := []struct {
		name string
		// holderPoints are failpoints of the holder after the barrier that
		// keeps it at its turn until the proposal is in.
		holderPoints string
		// holderLands: the holder's own write is published.
		holderLands bool
		// proposerLeads: the proposer ends up running its write itself.
		proposerLeads bool
	}{
		{name: "holder commits both", holderLands: true},
		{name: "holder dies after claiming", holderPoints: FPForwardClaimed + "=exit", proposerLeads: true},
		{name: "holder dies before its CAS", holderPoints: FPForwardPending + "=exit", proposerLeads: true},
		{name: "holder dies after its CAS", holderPoints: "commit/after-cas=exit", holderLands: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, bdir := t.TempDir(), t.TempDir()
			g := writersGraph(t, writersStore(t, dir, 0), 8)
			points := FPForwardTurn + "=barrier"
			if tc.holderPoints != "" {
				points += "," + tc.holderPoints
			}
			upd := func(actor, key string, v int) forwardJob {
				return forwardJob{Dir: dir, Actor: actor, Source: linQueries, Name: "upd", Params: map[string]any{"k": key, "v": v}}
			}
			holder := startForwardChild(t, upd("holder", "w0", 10), failpoint.EnvVar+"="+points, failpoint.BarrierEnv+"="+bdir)
			waitForFile(t, filepath.Join(bdir, "arrived-*"))
			var penv []string
			if !tc.proposerLeads {
				// A proposer that leads instead of handing over fails.
				penv = append(penv, failpoint.EnvVar+"="+FPForwardTurn+"=error")
			}
			proposer := startForwardChild(t, upd("proposer", "w1", 20), penv...)
			waitForFile(t, filepath.Join(dir, ".locks", "mail-*", "p-*"))
			if err := os.WriteFile(filepath.Join(bdir, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			hcode, hrep := holder.wait(t)
			pcode, prep := proposer.wait(t)
			if pcode != 0 || prep == nil || prep.Err != "" || prep.Affected != 1 || prep.Commit == "" {
				t.Fatalf("proposer: exit %d, report %+v\n%s", pcode, prep, proposer.out.String())
			}
			if tc.holderPoints == "" && (hcode != 0 || hrep == nil || hrep.Err != "") {
				t.Fatalf("holder: exit %d, report %+v\n%s", hcode, hrep, holder.out.String())
			}
			if tc.holderPoints != "" && hcode != failpoint.ExitCode {
				t.Fatalf("holder: exit %d, want the injected crash\n%s", hcode, holder.out.String())
			}

			// The proposer's write is on main once, as the commit it
			// reported; the holder's is there iff it published.
			log, err := g.Log(context.Background(), "main", 0)
			if err != nil {
				t.Fatal(err)
			}
			byActor := map[string][]CommitInfo{}
			for _, c := range log {
				byActor[c.Actor] = append(byActor[c.Actor], c)
			}
			if got := byActor["proposer"]; len(got) != 1 || got[0].ID != prep.Commit {
				t.Fatalf("proposer's commits on main: %+v, reported %s", got, prep.Commit)
			}
			if got := len(byActor["holder"]); got != map[bool]int{true: 1}[tc.holderLands] {
				t.Fatalf("holder's commits on main: %d, want lands=%v", got, tc.holderLands)
			}
			if tc.holderLands && !tc.proposerLeads && byActor["proposer"][0].Parent != byActor["holder"][0].ID {
				t.Fatalf("the proposer's write was not chained on the holder's: %+v", log[:2])
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".locks", "mail-*", "*")); len(m) != 0 {
				t.Fatalf("mailbox not emptied: %v", m)
			}
			want := map[string]int64{"w1": 20}
			if tc.holderLands {
				want["w0"] = 10
			}
			for k, v := range want {
				if got := acctValue(t, g, k); got != v {
					t.Fatalf("%s = %d, want %d", k, got, v)
				}
			}
		})
	}
}

// acctValue reads Acct k's v on main's head (a fresh read: g is not
// the handle that wrote).
func acctValue(t *testing.T, g *Graph, k string) int64 {
	t.Helper()
	_, rows := liveNodes(t, g, Target{}, "Acct")
	for i := range rows.IDs {
		if cell(rows, i, "name") == k {
			v, _ := cell(rows, i, "v").(int64)
			return v
		}
	}
	t.Fatalf("no Acct %s", k)
	return 0
}

// forwardSchema has a @unique property and an @embed target, for writes
// the turn's holder does not apply.
const forwardSchema = `
node Doc {
    name: String @key
    tag: String? @unique
    text: String?
    vec: Vector(2)? @embed(text)
}
`

const forwardQueries = `
query tag($k: String, $t: String) { update Doc set { tag: $t } where name = $k }
query text($k: String, $x: String) { update Doc set { text: $x } where name = $k }
`

// TestForwardedWriteNotApplied: a write the holder does not apply comes
// back to its proposer, which runs it itself: one that fails there (a
// @unique value the holder's own write took) fails with the proposer's
// own typed error and leaves no commit; one the holder must not run (it
// writes a type with an @embed target, whose embedding is the proposer's
// to compute) lands once, committed by the proposer after the holder's.
func TestForwardedWriteNotApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocesses")
	}
	cases := []struct {
		name                   string
		holderParams, proposed map[string]any
		proposedQuery          string
		wantErr                string // "" = the proposer's write lands
	}{
		{name: "fails at the holder and again in its process", proposedQuery: "tag",
			holderParams: map[string]any{"k": "d0", "t": "x"}, proposed: map[string]any{"k": "d1", "t": "x"},
			wantErr: "unique"},
		{name: "an @embed target runs in its own process", proposedQuery: "text",
			holderParams: map[string]any{"k": "d0", "t": "y"}, proposed: map[string]any{"k": "d1", "x": "hello"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, bdir := t.TempDir(), t.TempDir()
			ctx := context.Background()
			g := mustInit(t, writersStore(t, dir, 0), "doc.pg", forwardSchema, "setup", Options{})
			if _, err := g.Load(ctx, strings.NewReader(`{"type":"Doc","data":{"name":"d0"}}`+"\n"+`{"type":"Doc","data":{"name":"d1"}}`+"\n"), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatal(err)
			}
			holder := startForwardChild(t, forwardJob{Dir: dir, Actor: "holder", Source: forwardQueries, Name: "tag", Params: tc.holderParams},
				failpoint.EnvVar+"="+FPForwardTurn+"=barrier", failpoint.BarrierEnv+"="+bdir)
			waitForFile(t, filepath.Join(bdir, "arrived-*"))
			// Only the proposer can embed (the mock provider): had the holder
			// run the @embed write, the vector would stay null.
			proposer := startForwardChild(t, forwardJob{Dir: dir, Actor: "proposer", Source: forwardQueries, Name: tc.proposedQuery, Params: tc.proposed},
				embed.EnvMock+"=1")
			waitForFile(t, filepath.Join(dir, ".locks", "mail-*", "p-*"))
			if err := os.WriteFile(filepath.Join(bdir, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if code, rep := holder.wait(t); code != 0 || rep == nil || rep.Err != "" {
				t.Fatalf("holder: exit %d, %+v\n%s", code, rep, holder.out.String())
			}
			code, rep := proposer.wait(t)
			if code != 0 || rep == nil {
				t.Fatalf("proposer: exit %d\n%s", code, proposer.out.String())
			}
			log, err := g.Log(ctx, "main", 0)
			if err != nil {
				t.Fatal(err)
			}
			var mine []CommitInfo
			for _, c := range log {
				if c.Actor == "proposer" {
					mine = append(mine, c)
				}
			}
			if tc.wantErr != "" {
				if !strings.Contains(rep.Err, tc.wantErr) || len(mine) != 0 {
					t.Fatalf("proposer: %+v, commits %+v; want its own %q error and no commit", rep, mine, tc.wantErr)
				}
				return
			}
			if rep.Err != "" || len(mine) != 1 || mine[0].ID != rep.Commit || log[0].ID != rep.Commit || log[1].Actor != "holder" {
				t.Fatalf("proposer: %+v, commits %+v; want one commit after the holder's", rep, log[:2])
			}
			_, rows := liveNodes(t, g, Target{}, "Doc")
			for i := range rows.IDs {
				if cell(rows, i, "name") == "d1" && cell(rows, i, "vec") == nil {
					t.Fatal("d1's vector is null: the holder ran the @embed write")
				}
			}
		})
	}
}

// TestForwardedWriteCancelled: a write cancelled while its proposal waits
// for the turn's holder is withdrawn and leaves no trace: it returns its
// context's error, the holder never runs it, the mailbox is empty.
func TestForwardedWriteCancelled(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocesses")
	}
	dir, bdir := t.TempDir(), t.TempDir()
	g := writersGraph(t, writersStore(t, dir, 0), 8)
	holder := startForwardChild(t, forwardJob{Dir: dir, Actor: "holder", Source: linQueries, Name: "upd", Params: map[string]any{"k": "w0", "v": 10}},
		failpoint.EnvVar+"="+FPForwardTurn+"=barrier", failpoint.BarrierEnv+"="+bdir)
	waitForFile(t, filepath.Join(bdir, "arrived-*"))

	ctx, cancel := context.WithCancel(context.Background())
	proposed := make(chan bool, 1)
	go func() {
		defer cancel()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if m, _ := filepath.Glob(filepath.Join(dir, ".locks", "mail-*", "p-*")); len(m) > 0 {
				proposed <- true
				return
			}
		}
		proposed <- false
	}()
	_, err := g.Mutate(ctx, "main", linPlans(t, g)["upd"], map[string]any{"k": "w1", "v": 20}, MutateOptions{Actor: "proposer", Source: linQueries})
	if !<-proposed {
		t.Fatal("the write was never proposed")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v, want context.Canceled", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".locks", "mail-*", "*")); len(m) != 0 {
		t.Fatalf("mailbox after the withdrawal: %v", m)
	}
	if err := os.WriteFile(filepath.Join(bdir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, rep := holder.wait(t); code != 0 || rep == nil || rep.Err != "" {
		t.Fatalf("holder: exit %d, %+v\n%s", code, rep, holder.out.String())
	}
	if got := acctValue(t, g, "w1"); got != 0 {
		t.Fatalf("w1 = %d: the cancelled write landed", got)
	}
	if got := acctValue(t, g, "w0"); got != 10 {
		t.Fatalf("w0 = %d, want the holder's 10", got)
	}
}

// TestHolderAnswersProposals: a batch holding the turn claims what is in
// the mailbox and answers every proposal with one final receipt: a valid
// write is chained after the holder's own with its actor and counts; a
// proposal past its deadline, an unreadable one and one whose source does
// not compile are answered "not applied" and change nothing.
func TestHolderAnswersProposals(t *testing.T) {
	dir := t.TempDir()
	g := writersGraph(t, writersStore(t, dir, 0), 8)
	if g.mail == nil {
		t.Fatal("a local store behind batching has no mailbox")
	}
	name := turnName("main")
	future := time.Now().Add(time.Minute).UnixMilli()
	propose := func(id string, doc any) {
		t.Helper()
		data, ok := doc.([]byte)
		if !ok {
			var err error
			if data, err = json.Marshal(doc); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.mail.Propose(name, id, data); err != nil {
			t.Fatal(err)
		}
	}
	upd := func(k string, v int) forwardSpec {
		return forwardSpec{Source: linQueries, Name: "upd", Params: json.RawMessage(fmt.Sprintf(`{"k":%q,"v":%d}`, k, v)), Actor: "proposer-" + k}
	}
	propose("01A", proposalDoc{Version: forwardVersion, Deadline: future, Writes: []forwardSpec{upd("w1", 11), upd("w2", 12)}})
	propose("01B", proposalDoc{Version: forwardVersion, Deadline: time.Now().Add(-time.Second).UnixMilli(), Writes: []forwardSpec{upd("w3", 13)}})
	propose("01C", []byte("{not json"))
	propose("01D", proposalDoc{Version: forwardVersion, Deadline: future, Writes: []forwardSpec{{Source: "query upd( {", Name: "upd"}}})

	res, err := g.Mutate(context.Background(), "main", linPlans(t, g)["upd"], map[string]any{"k": "w0", "v": 10}, MutateOptions{Actor: "holder", Source: linQueries})
	if err != nil || res.Commit == nil {
		t.Fatalf("holder's write: %+v %v", res, err)
	}
	results := map[string][]forwardResult{}
	for _, id := range []string{"01A", "01B", "01C", "01D"} {
		rs, final, ok := g.receipt(name, id)
		if !ok || !final {
			t.Fatalf("proposal %s: no final receipt", id)
		}
		results[id] = rs
	}
	if rs := results["01A"]; len(rs) != 2 || rs[0].Commit == "" || rs[1].Commit == "" || rs[0].AffectedNodes != 1 || rs[0].NotApplied != "" {
		t.Fatalf("valid proposal: %+v", rs)
	}
	for _, id := range []string{"01B", "01C", "01D"} {
		if rs := results[id]; len(rs) != 1 || rs[0].Commit != "" || rs[0].NotApplied == "" {
			t.Fatalf("proposal %s: %+v, want not applied", id, rs)
		}
	}
	log, err := g.Log(context.Background(), "main", 3)
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: w2's write on w1's on the holder's, one chain.
	if log[0].ID != results["01A"][1].Commit || log[0].Actor != "proposer-w2" || log[1].ID != results["01A"][0].Commit || log[2].ID != res.Commit.ID {
		t.Fatalf("chain: %+v", log)
	}
	for k, want := range map[string]int64{"w0": 10, "w1": 11, "w2": 12, "w3": 0} {
		if got := acctValue(t, g, k); got != want {
			t.Fatalf("%s = %d, want %d", k, got, want)
		}
	}
}
