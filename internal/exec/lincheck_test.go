package exec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// The linearizability check (Jepsen-style): clients in goroutines (two
// handles, so group commit batches them) and in OS processes (this test
// binary re-run as TestLinHelper) run random writes on main for a while,
// recording each operation's invocation and completion time and outcome.
// Afterwards:
//
//   - every commit of main after the setup is a maintenance commit or the
//     commit an acknowledged operation reported (its actor names the
//     operation): nothing unacknowledged is visible;
//   - every acknowledged commit is on main's chain;
//   - the chain order respects real time: an operation that completed
//     before another was invoked comes first;
//   - replaying the chain's operations in order on a model reproduces every
//     receipt's affected count, never lets a strict insert (load append)
//     overwrite an existing key, and yields the final graph and sampled
//     historical snapshots exactly;
//   - every failed operation failed with a documented error
//     (ReadSetChanged, KeyConflict, Contention).
//
// The default run is short (CI); OMNIGRAPH_LIN_SECONDS=60 runs the full
// check of docs/write-path.md.

const linSchema = `
node Acct {
    name: String @key
    v: I64
}
`

const linQueries = `
query ins($k: String, $v: I64) { insert Acct { name: $k, v: $v } }
query upd($k: String, $v: I64) { update Acct set { v: $v } where name = $k }
query del($k: String) { delete Acct where name = $k }
query bump($min: I64, $v: I64) { update Acct set { v: $v } where v > $min }
`

const (
	linKeys = 48 // k00…k47; k00…k03 are hot
	linHot  = 4
)

// linOp is one operation of the history.
type linOp struct {
	ID       string   `json:"id"` // also the commit actor
	Kind     string   `json:"kind"`
	Key      string   `json:"key,omitempty"`
	Keys     []string `json:"keys,omitempty"`
	V        int64    `json:"v"`
	Min      int64    `json:"min,omitempty"`
	Invoke   int64    `json:"invoke"`
	Complete int64    `json:"complete"`
	OK       bool     `json:"ok"`
	Commit   string   `json:"commit,omitempty"`
	Affected int64    `json:"affected"`
	ErrKind  string   `json:"err_kind,omitempty"`
	Err      string   `json:"err,omitempty"`
}

func linPlans(t testing.TB, g *Graph) map[string]*query.Plan {
	t.Helper()
	out := map[string]*query.Plan{}
	for _, n := range []string{"ins", "upd", "del", "bump"} {
		out[n] = headPlan(t, g, linQueries, n)
	}
	return out
}

func linKey(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return fmt.Sprintf("k%02d", r.IntN(linHot))
	}
	return fmt.Sprintf("k%02d", r.IntN(linKeys))
}

// linClient runs random operations on g until the deadline.
func linClient(ctx context.Context, t testing.TB, g *Graph, plans map[string]*query.Plan, client string, seed uint64, until time.Time, emit func(linOp)) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
	for seq := 0; time.Now().Before(until); seq++ {
		op := linOp{ID: fmt.Sprintf("%s/%d", client, seq), V: r.Int64N(1000)}
		var res *MutationResult
		var err error
		mut := func(name string, params map[string]any) {
			op.Invoke = time.Now().UnixNano()
			res, err = g.Mutate(ctx, "main", plans[name], params, MutateOptions{Actor: op.ID, Source: linQueries})
		}
		switch p := r.IntN(100); {
		case p < 30:
			op.Kind, op.Key = "ins", linKey(r)
			mut("ins", map[string]any{"k": op.Key, "v": op.V})
		case p < 65:
			op.Kind, op.Key = "upd", linKey(r)
			mut("upd", map[string]any{"k": op.Key, "v": op.V})
		case p < 78:
			op.Kind, op.Key = "del", linKey(r)
			mut("del", map[string]any{"k": op.Key})
		case p < 82:
			op.Kind, op.Min = "bump", 900+r.Int64N(100)
			mut("bump", map[string]any{"min": op.Min, "v": op.V})
		default:
			// Loads: append of fresh keys (sometimes with a contended key:
			// a strict insert of an existing key is a KeyConflict) or merge.
			op.Kind = "append"
			if r.IntN(3) == 0 {
				op.Kind = "merge"
			}
			var b strings.Builder
			n := 1 + r.IntN(3)
			for i := range n {
				k := fmt.Sprintf("L-%s-%d-%d", client, seq, i)
				if i == 0 && (op.Kind == "merge" || r.IntN(4) == 0) {
					k = linKey(r)
				}
				op.Keys = append(op.Keys, k)
				fmt.Fprintf(&b, `{"type":"Acct","data":{"name":%q,"v":%d}}`+"\n", k, op.V)
			}
			op.Invoke = time.Now().UnixNano()
			var lr *LoadResult
			lr, err = g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadMode(op.Kind), Actor: op.ID})
			if err == nil {
				res = &MutationResult{AffectedNodes: int64(n), Commit: lr.Commit}
			}
		}
		op.Complete = time.Now().UnixNano()
		var rs *ReadSetChangedError
		var kc *KeyConflictError
		var ce *ContentionError
		switch {
		case err == nil:
			op.OK, op.Affected = true, res.AffectedNodes
			if res.Commit != nil {
				op.Commit = res.Commit.ID
			}
		case errors.As(err, &rs):
			op.ErrKind = "read_set_conflict"
		case errors.As(err, &kc):
			op.ErrKind = "key_conflict"
		case errors.As(err, &ce):
			op.ErrKind = "contention"
		default:
			op.ErrKind = "unexpected"
		}
		if err != nil {
			op.Err = err.Error()
		}
		emit(op)
	}
}

// TestLinHelper is one OS-process client of TestLinearizable; it does
// nothing unless run by it.
func TestLinHelper(t *testing.T) {
	spec := os.Getenv("OMNIGRAPH_LIN_HELPER")
	if spec == "" {
		t.Skip("run by TestLinearizable")
	}
	parts := strings.Split(spec, ",") // dir,client,until(unix ns),out
	until, _ := strconv.ParseInt(parts[2], 10, 64)
	ctx := context.Background()
	st, err := storage.NewLocal(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	// The stack of every public handle: batched puts, so batches share
	// fragments (batch_share.go).
	g, err := Open(ctx, storage.NewBatching(st), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(parts[3])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	enc := json.NewEncoder(w)
	seed, _ := strconv.ParseUint(strings.TrimPrefix(parts[1], "p"), 10, 64)
	linClient(ctx, t, g, linPlans(t, g), parts[1], 1000+seed, time.Unix(0, until), func(op linOp) { _ = enc.Encode(op) })
}

func TestLinearizable(t *testing.T) {
	seconds := 3.0
	if testing.Short() {
		seconds = 1
	}
	if s := os.Getenv("OMNIGRAPH_LIN_SECONDS"); s != "" {
		var err error
		if seconds, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatal(err)
		}
	}
	const goroutines, processes = 16, 8
	ctx := context.Background()
	dir := t.TempDir()
	st, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Init(ctx, st, "lin.pg", linSchema, "setup", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seed strings.Builder
	for i := range linKeys {
		fmt.Fprintf(&seed, `{"type":"Acct","data":{"name":"k%02d","v":%d}}`+"\n", i, i)
	}
	if _, err := g.Load(ctx, strings.NewReader(seed.String()), LoadRequest{Mode: LoadAppend, Actor: "setup"}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Duration(seconds * float64(time.Second)))

	// OS processes.
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var procs []*osexec.Cmd
	var outs []string
	for p := range processes {
		out := filepath.Join(t.TempDir(), "history.jsonl")
		cmd := osexec.Command(bin, "-test.run=^TestLinHelper$", "-test.count=1", "-test.timeout=10m")
		cmd.Env = append(os.Environ(), fmt.Sprintf("OMNIGRAPH_LIN_HELPER=%s,p%d,%d,%s", dir, p, until.UnixNano(), out))
		var stderr strings.Builder
		cmd.Stderr, cmd.Stdout = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
		t.Cleanup(func() {
			if t.Failed() && stderr.Len() > 0 {
				t.Logf("process p%d output:\n%s", p, stderr.String())
			}
		})
	}
	// Goroutines on two handles (each handle group-commits its writers).
	var mu sync.Mutex
	var history []linOp
	emit := func(op linOp) {
		mu.Lock()
		history = append(history, op)
		mu.Unlock()
	}
	handles := make([]*Graph, 2)
	for i := range handles {
		// Batched puts, as every public handle has them.
		if handles[i], err = Open(ctx, storage.NewBatching(st), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	plans := linPlans(t, handles[0])
	var wg sync.WaitGroup
	for c := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			linClient(ctx, t, handles[c%2], plans, fmt.Sprintf("g%d", c), uint64(c), until, emit)
		}()
	}
	wg.Wait()
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process p%d: %v", i, err)
		}
		f, err := os.Open(outs[i])
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(f)
		for {
			var op linOp
			if err := dec.Decode(&op); err != nil {
				break
			}
			history = append(history, op)
		}
		f.Close()
	}
	linCheck(t, g, history)
}

// linCheck verifies a history against main's commit chain and contents.
func linCheck(t *testing.T, g *Graph, history []linOp) {
	ctx := context.Background()
	ops := map[string]*linOp{}
	errKinds := map[string]int{}
	byClient := map[string]int{}
	for i := range history {
		op := &history[i]
		ops[op.ID] = op
		byClient[strings.Split(op.ID, "/")[0]]++
		if op.OK {
			errKinds["ok"]++
		} else {
			errKinds[op.ErrKind]++
			if op.ErrKind == "unexpected" {
				t.Errorf("op %s (%s) failed with an undocumented error: %s", op.ID, op.Kind, op.Err)
			}
		}
	}
	log, err := g.Log(ctx, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(log)
	model := map[string]int64{}
	for i := range linKeys {
		model[fmt.Sprintf("k%02d", i)] = int64(i)
	}
	// Sampled snapshots: commit id → the model after it.
	samples := map[string]map[string]int64{}
	every := max(1, len(log)/40)
	var chainOps []*linOp
	maint := 0
	for i, c := range log {
		if c.Actor == "setup" || c.Kind == string(commit.KindInit) {
			continue
		}
		if c.Kind == string(commit.KindMaintenance) {
			maint++
			continue
		}
		op := ops[c.Actor]
		if op == nil || !op.OK || op.Commit != c.ID {
			t.Fatalf("commit %s (actor %q) is not the acknowledged commit of its operation: %+v", c.ID, c.Actor, op)
		}
		if i > 0 && c.Parent != log[i-1].ID {
			t.Fatalf("history is not a chain at %s", c.ID)
		}
		chainOps = append(chainOps, op)
		var want int64
		switch op.Kind {
		case "ins":
			want, model[op.Key] = 1, op.V
		case "upd":
			if _, ok := model[op.Key]; ok {
				want, model[op.Key] = 1, op.V
			}
		case "del":
			if _, ok := model[op.Key]; ok {
				want = 1
				delete(model, op.Key)
			}
		case "bump":
			for k, v := range model {
				if v > op.Min {
					want++
					model[k] = op.V
				}
			}
		case "append", "merge":
			want = int64(len(op.Keys))
			for _, k := range op.Keys {
				if _, ok := model[k]; ok && op.Kind == "append" {
					t.Fatalf("append %s of existing key %s succeeded at its place in the chain", op.ID, k)
				}
				model[k] = op.V
			}
		}
		if want != op.Affected {
			t.Fatalf("op %s (%s %s): receipt says %d affected, the chain order gives %d", op.ID, op.Kind, op.Key, op.Affected, want)
		}
		if i%every == 0 {
			samples[c.ID] = maps.Clone(model)
		}
	}
	acked := 0
	for _, op := range history {
		if op.OK && op.Commit != "" {
			acked++
		}
	}
	if acked != len(chainOps) {
		t.Fatalf("%d acknowledged commits, %d on main's chain", acked, len(chainOps))
	}
	// Real time: walking the chain, no operation may have completed before
	// an earlier-placed one was invoked.
	var maxInvoke int64
	var maxOp *linOp
	for _, op := range chainOps {
		if op.Complete < maxInvoke {
			t.Fatalf("op %s completed (%d) before op %s, earlier in the chain, was invoked (%d)", op.ID, op.Complete, maxOp.ID, maxInvoke)
		}
		if op.Invoke > maxInvoke {
			maxInvoke, maxOp = op.Invoke, op
		}
	}
	state := func(tg Target) map[string]int64 {
		snap, err := g.Resolve(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := snap.Nodes(ctx, "Acct")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for i, id := range tab.IDs {
			if !tab.Alive(i) {
				continue
			}
			out[id] = tab.Value(i, "v").(int64)
		}
		return out
	}
	if got := state(Target{}); !maps.Equal(got, model) {
		t.Fatalf("final graph differs from the replayed chain:\n got %v\nwant %v", got, model)
	}
	for id, want := range samples {
		if got := state(Target{Snapshot: id}); !maps.Equal(got, want) {
			t.Fatalf("snapshot %s differs from the replayed chain", id)
		}
	}
	t.Logf("%d operations from %d clients: %v; %d commits on main's chain (%d maintenance), %d snapshots compared",
		len(history), len(byClient), errKinds, len(chainOps), maint, len(samples)+1)
}
