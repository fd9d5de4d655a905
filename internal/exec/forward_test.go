package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// forwardProcEnv carries a TestForwardHelper's job: dir|actor|key|value.
const forwardProcEnv = "OMNIGRAPH_FORWARD_PROC"

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
	p := strings.Split(spec, "|")
	ctx := context.Background()
	g, err := Open(ctx, writersStore(t, p[0], 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v int64
	fmt.Sscan(p[3], &v)
	res, err := g.Mutate(ctx, "main", linPlans(t, g)["upd"], map[string]any{"k": p[2], "v": v}, MutateOptions{Actor: p[1], Source: linQueries})
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

func startForwardChild(t *testing.T, dir, actor, key string, v int, env ...string) *forwardChild {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &forwardChild{done: make(chan error, 1)}
	c.cmd = osexec.Command(bin, "-test.run=^TestForwardHelper$", "-test.count=1")
	c.cmd.Env = append(append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%d", forwardProcEnv, dir, actor, key, v)), env...)
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
			holder := startForwardChild(t, dir, "holder", "w0", 10, failpoint.EnvVar+"="+points, failpoint.BarrierEnv+"="+bdir)
			waitForFile(t, filepath.Join(bdir, "arrived-*"))
			var penv []string
			if !tc.proposerLeads {
				// A proposer that leads instead of handing over fails.
				penv = append(penv, failpoint.EnvVar+"="+FPForwardTurn+"=error")
			}
			proposer := startForwardChild(t, dir, "proposer", "w1", 20, penv...)
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
