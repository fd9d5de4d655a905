package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// conflictSchema: one keyed type whose rows two processes update.
const conflictSchema = `
node User {
    name: String @key
    n: I32
}
`

// TestProcsRowConflicts runs rounds of two concurrent `omnigraph mutate`
// processes that are made to overlap for certain: both stop at the
// failpoint just before their publish CAS (a barrier) until both have
// prepared, then race the CAS. Updates of different rows of one type both
// succeed every round (the loser rebases: its row is unchanged). Updates of
// the same row: exactly one wins, the other exits 1 with the typed conflict
// as its --json body (read_set_conflict naming User 'u1', updated) and the
// error line on stderr, and the row holds the winner's value (docs/write-path.md).
func TestProcsRowConflicts(t *testing.T) {
	bin := omnigraphBin(t)
	tmp := t.TempDir() // the rounds' barrier directories
	dir := procsGraph(t, conflictSchema, `{"type":"User","data":{"name":"u1","n":0}}`, `{"type":"User","data":{"name":"u2","n":0}}`)

	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	const set = `query set($u: String, $v: I32) { update User set { n: $v } where name = $u }`
	values := func() map[string]int {
		out := map[string]int{}
		for _, row := range rowsOf(t, mustRun(t, "query", "--store", dir, "--json", "-e", `query q() { match { $u: User } return { $u.name, $u.n } }`)) {
			var n int
			fmt.Sscan(fmt.Sprint(row["u.n"]), &n)
			out[fmt.Sprint(row["u.name"])] = n
		}
		return out
	}
	// race runs the two updates (row, value) through the barrier.
	race := func(round int, ups [2]struct {
		row string
		v   int
	}) [2]runResult {
		bdir := filepath.Join(tmp, fmt.Sprintf("barrier-%d", round))
		if err := os.Mkdir(bdir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Both writers must prepare on the same head, so they race by CAS
		// instead of taking turns (which would make the second wait for
		// the first at its turn, never reaching the barrier).
		env := []string{failpoint.EnvVar + "=exec/before-publish=barrier", failpoint.BarrierEnv + "=" + bdir, "OMNIGRAPH_WRITE_TURNS=0"}
		var out [2]runResult
		var errs [2]error
		var wg sync.WaitGroup
		for i, u := range ups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = procRun(bin, env, "mutate", "--store", dir, "--json", "--quiet",
					"--params", fmt.Sprintf(`{"u":%q,"v":%d}`, u.row, u.v), "-e", set)
			}()
		}
		// Release when both have prepared (or one finished early: a bug
		// the checks below report).
		deadline := time.Now().Add(time.Minute)
		for {
			ents, _ := os.ReadDir(bdir)
			if len(ents) >= 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := os.WriteFile(filepath.Join(bdir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	type up = struct {
		row string
		v   int
	}

	okDifferent := 0
	for r := 1; r <= rounds; r++ {
		out := race(r, [2]up{{"u1", r}, {"u2", r}})
		for i, o := range out {
			if o.code != 0 {
				t.Fatalf("round %d, different rows, writer %d: exit %d\n%s%s", r, i, o.code, o.stdout, o.stderr)
			}
			okDifferent++
		}
		if got := values(); got["u1"] != r || got["u2"] != r {
			t.Fatalf("round %d, different rows: values %v", r, got)
		}
	}

	wins, conflicts := 0, 0
	for r := 1; r <= rounds; r++ {
		a, b := 1000+2*r, 1000+2*r+1
		out := race(rounds+r, [2]up{{"u1", a}, {"u1", b}})
		winner := -1
		for i, o := range out {
			if o.code == 0 {
				if winner >= 0 {
					t.Fatalf("round %d, same row: both writers won", r)
				}
				winner = i
				continue
			}
			if o.code != 1 || !strings.Contains(o.stderr, "write conflict on branch 'main': node User 'u1' was updated") {
				t.Fatalf("round %d, same row, writer %d: exit %d, stderr %q", r, i, o.code, o.stderr)
			}
			var body struct {
				Error           string `json:"error"`
				Code            string `json:"code"`
				ReadSetConflict *struct {
					Member     string `json:"member"`
					EntityKind string `json:"entity_kind"`
					TypeName   string `json:"type_name"`
					EntityID   string `json:"entity_id"`
					Change     string `json:"change"`
					Expected   string `json:"expected"`
					Actual     string `json:"actual"`
				} `json:"read_set_conflict"`
			}
			if err := json.Unmarshal([]byte(o.stdout), &body); err != nil || body.ReadSetConflict == nil {
				t.Fatalf("round %d, same row, writer %d: body %q (%v)", r, i, o.stdout, err)
			}
			rs := body.ReadSetConflict
			if body.Code != "conflict" || rs.Member != "node:User" || rs.EntityKind != "node" || rs.TypeName != "User" ||
				rs.EntityID != "u1" || rs.Change != "updated" || rs.Expected == "" || rs.Actual == "" ||
				!strings.Contains(body.Error, "no effect") || strings.Contains(body.Error, "tables/") {
				t.Fatalf("round %d, same row, writer %d: conflict body %s", r, i, o.stdout)
			}
			conflicts++
		}
		if winner < 0 {
			t.Fatalf("round %d, same row: no writer won", r)
		}
		wins++
		if got := values(); got["u1"] != [2]int{a, b}[winner] {
			t.Fatalf("round %d, same row: u1 = %d, want the winner's %d", r, got["u1"], [2]int{a, b}[winner])
		}
	}
	t.Logf("different rows: %d of %d writes succeeded; same row: %d rounds with one winner and one typed conflict (%d conflicts)",
		okDifferent, 2*rounds, wins, conflicts)
}
