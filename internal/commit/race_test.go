package commit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentPublishLinear: 16 goroutines and 4 OS processes publish on
// one branch of a local-disk graph, rebasing after every lost CAS. Every
// successful publish must be in the history exactly once and the history must
// be one linear chain.
func TestConcurrentPublishLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	ctx := context.Background()
	dir := t.TempDir()
	st := localStore(t, dir)
	initGraph(t, st)

	const goroutines, perGoroutine = 16, 5
	const processes, perProcess = 4, 10
	gate := t.TempDir()
	released, abort := make(chan struct{}), make(chan struct{})
	var abortOnce sync.Once
	go func() {
		if err := gateOpen(gate, processes, abort); err != nil {
			t.Error(err)
		}
		close(released)
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []ID
	lostCAS := 0
	for p := range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := subprocess(t, "race", dir,
				countEnv+"="+fmt.Sprint(perProcess), tagEnv+"="+fmt.Sprintf("p%d", p), gateEnv+"="+gate)
			if code != 0 {
				t.Errorf("process %d exited %d", p, code)
				abortOnce.Do(func() { close(abort) })
			}
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Fields(out) {
				id, err := ParseID(line)
				if err != nil {
					t.Errorf("process %d printed %q", p, line)
					continue
				}
				won = append(won, id)
			}
		}()
	}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Open(ctx, st, Options{})
			if err != nil {
				t.Error(err)
				return
			}
			<-released // start together with the processes
			ids, lost, err := publishMany(ctx, r, fmt.Sprintf("g%d", g), perGoroutine)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			won = append(won, ids...)
			lostCAS += lost
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("in-process writers lost %d CAS races and rebased", lostCAS)

	r := openRepo(t, st)
	chain := linearChain(t, r, MainBranch)
	if want := goroutines*perGoroutine + processes*perProcess; len(won) != want || len(chain) != want+1 {
		t.Fatalf("%d publishes succeeded, history has %d commits; want %d and %d", len(won), len(chain), want, want+1)
	}
	inChain := map[ID]int{}
	for _, c := range chain {
		inChain[c.ID]++
	}
	for _, id := range won {
		if inChain[id] != 1 {
			t.Fatalf("published commit %s appears %d times in history", id, inChain[id])
		}
	}
	// Each writer's own commits appear in its publish order.
	last := map[string]int{}
	for i := len(chain) - 2; i >= 0; i-- {
		tag, n, _ := strings.Cut(chain[i].Message, "-")
		var k int
		fmt.Sscan(n, &k)
		if prev, ok := last[tag]; ok && k != prev+1 {
			t.Fatalf("writer %s: commit %d follows %d", tag, k, prev)
		}
		last[tag] = k
	}
}
