package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Race sizes for the in-suite races; the local cross-process tests pick their own.
const (
	raceWorkers = 16
	raceRounds  = 20 // PutIfAbsent rounds
	casWrites   = 8  // successful CAS writes per worker
)

// RacePutIfAbsent makes one PutIfAbsent attempt on key with a body naming
// racer, and reports whether it won. Losing means exactly ErrExists.
func RacePutIfAbsent(ctx context.Context, s storage.Store, key, racer string) (bool, error) {
	_, err := s.PutIfAbsent(ctx, key, []byte(racer))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrExists):
		return false, nil
	}
	return false, err
}

// CASWorker appends "<id>:<i>" lines to the chain stored at key (which must
// already exist), n times, each by Get + PutIfMatch retried on
// ErrPrecondition. It returns, for each of its successful writes, the chain
// length it extended (the "round" it won).
func CASWorker(ctx context.Context, s storage.Store, key, id string, n int) ([]int, error) {
	rounds := make([]int, 0, n)
	for i := 0; i < n; {
		data, info, err := s.Get(ctx, key)
		if err != nil {
			return rounds, err
		}
		chain := ParseChain(data)
		next := append(data, fmt.Sprintf("%s:%d\n", id, i)...)
		_, err = s.PutIfMatch(ctx, key, next, info.ETag)
		if errors.Is(err, storage.ErrPrecondition) {
			continue
		}
		if err != nil {
			return rounds, err
		}
		rounds = append(rounds, len(chain))
		i++
	}
	return rounds, nil
}

// ParseChain splits a chain object into its entries.
func ParseChain(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// CheckChain verifies a finished CAS race: chain holds every successful write
// exactly once, each worker's writes in its own order, and the rounds the
// workers report won are exactly 0..len(chain)-1, each won once.
func CheckChain(chain []string, won map[string][]int, perWorker int) error {
	total := 0
	owner := make(map[int]string)
	for id, rounds := range won {
		if len(rounds) != perWorker {
			return fmt.Errorf("worker %s won %d rounds, want %d", id, len(rounds), perWorker)
		}
		for _, r := range rounds {
			if prev, dup := owner[r]; dup {
				return fmt.Errorf("round %d won by both %s and %s", r, prev, id)
			}
			owner[r] = id
		}
		total += len(rounds)
	}
	if len(chain) != total {
		return fmt.Errorf("chain has %d entries, %d writes succeeded (lost or phantom updates)", len(chain), total)
	}
	nextSeq := make(map[string]int)
	for pos, entry := range chain {
		id, seqStr, ok := strings.Cut(entry, ":")
		seq, err := strconv.Atoi(seqStr)
		if !ok || err != nil {
			return fmt.Errorf("chain entry %d %q is malformed", pos, entry)
		}
		if owner[pos] != id {
			return fmt.Errorf("chain entry %d is %q but round %d was won by %q", pos, entry, pos, owner[pos])
		}
		if seq != nextSeq[id] {
			return fmt.Errorf("chain entry %d %q out of order: want %s:%d", pos, entry, id, nextSeq[id])
		}
		nextSeq[id]++
	}
	return nil
}

func testPutIfAbsentRace(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for round := range raceRounds {
		key := fmt.Sprintf("race/%03d", round)
		var wg sync.WaitGroup
		won := make([]bool, raceWorkers)
		errs := make([]error, raceWorkers)
		for w := range raceWorkers {
			wg.Go(func() { won[w], errs[w] = RacePutIfAbsent(ctx, s, key, strconv.Itoa(w)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		winner := soleWinner(t, round, won)
		if got, _ := mustGet(t, s, key); got != strconv.Itoa(winner) {
			t.Fatalf("round %d: object %q, winner %d", round, got, winner)
		}
	}
}

// soleWinner returns the one racer of round that won, failing the test
// unless exactly one did.
func soleWinner(t *testing.T, round int, won []bool) int {
	t.Helper()
	winner := -1
	for w, ok := range won {
		if ok {
			if winner >= 0 {
				t.Fatalf("round %d: racers %d and %d both won", round, winner, w)
			}
			winner = w
		}
	}
	if winner < 0 {
		t.Fatalf("round %d: no winner", round)
	}
	return winner
}

func testCASChain(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const key = "refs/heads/main"
	if _, err := s.PutIfAbsent(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		won = make(map[string][]int)
	)
	errs := make([]error, raceWorkers)
	for w := range raceWorkers {
		id := fmt.Sprintf("g%02d", w)
		wg.Go(func() {
			rounds, err := CASWorker(ctx, s, key, id, casWrites)
			errs[w] = err
			mu.Lock()
			won[id] = rounds
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	data, _, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckChain(ParseChain(data), won, casWrites); err != nil {
		t.Fatal(err)
	}
}
