package storagetest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// testCopyIfAbsent pins storage.CopyIfAbsent on the store: through its
// Copier when it has one, by the read + PutIfAbsent fallback otherwise.
func testCopyIfAbsent(t *testing.T, s storage.Store) {
	ctx := t.Context()
	src := mustPut(t, s, "refs/heads/main", "head-1")
	info, err := storage.CopyIfAbsent(ctx, s, "refs/heads/main", "refs/heads/feature")
	if err != nil {
		t.Fatalf("copy to an absent key: %v", err)
	}
	st, _ := s.Stat(ctx, "refs/heads/feature")
	if info.Size < 0 { // a store that cannot report it (S3 CopyObject)
		info.Size = st.Size
	}
	sameInfo(t, "CopyIfAbsent", info, st)
	if got, _ := mustGet(t, s, "refs/heads/feature"); got != "head-1" {
		t.Fatalf("copy holds %q, want the source's bytes", got)
	}

	// The copy is an object of its own: replacing it leaves the source alone.
	if _, err := s.PutIfMatch(ctx, "refs/heads/feature", []byte("head-2"), info.ETag); err != nil {
		t.Fatalf("advance the copy: %v", err)
	}
	if got, gotInfo := mustGet(t, s, "refs/heads/main"); got != "head-1" || gotInfo.ETag != src.ETag {
		t.Fatalf("source after advancing the copy: %q %q", got, gotInfo.ETag)
	}

	// An existing destination is not replaced.
	_, err = storage.CopyIfAbsent(ctx, s, "refs/heads/main", "refs/heads/feature")
	wantKeyErr(t, "copy onto an existing key", err, storage.ErrExists, "refs/heads/feature")
	if got, _ := mustGet(t, s, "refs/heads/feature"); got != "head-2" {
		t.Fatalf("existing destination became %q", got)
	}

	// A missing source creates nothing.
	_, err = storage.CopyIfAbsent(ctx, s, "refs/heads/nope", "refs/heads/other")
	var se *storage.CopySourceError
	if !errors.Is(err, storage.ErrNotFound) || !errors.As(err, &se) || se.Src != "refs/heads/nope" {
		t.Fatalf("copy of a missing source: %v, want a *CopySourceError wrapping ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "refs/heads/other"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("copy of a missing source created its destination: %v", err)
	}
	for _, key := range []string{"", "/abs", "a/../b"} {
		_, err := storage.CopyIfAbsent(ctx, s, "refs/heads/main", key)
		if !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("copy to %q: %v, want ErrInvalidKey", key, err)
		}
		_, err = storage.CopyIfAbsent(ctx, s, key, "refs/heads/x")
		if !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("copy from %q: %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := s.Stat(ctx, "refs/heads/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("copy from an invalid key created its destination: %v", err)
	}
}

// testCopyIfAbsentRace: copies and PutIfAbsent racing for one destination
// have exactly one winner, and a copy racing with replacements of its
// source holds one whole version of it.
func testCopyIfAbsentRace(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const src = "refs/heads/main"
	if _, err := s.PutIfAbsent(ctx, src, []byte("v:0")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, info, err := s.Get(ctx, src)
			if err != nil {
				return
			}
			_, _ = s.PutIfMatch(ctx, src, []byte("v:"+strconv.Itoa(i)+strings.Repeat(".", i%7)), info.ETag)
		}
	})
	defer func() { close(stop); writer.Wait() }()
	for round := range raceRounds / 2 {
		dst := fmt.Sprintf("refs/heads/race-%03d", round)
		var wg sync.WaitGroup
		won := make([]bool, raceWorkers)
		errs := make([]error, raceWorkers)
		for w := range raceWorkers {
			wg.Go(func() {
				var err error
				if w%2 == 0 {
					_, err = storage.CopyIfAbsent(ctx, s, src, dst)
				} else {
					_, err = s.PutIfAbsent(ctx, dst, []byte("put:"+strconv.Itoa(w)))
				}
				switch {
				case err == nil:
					won[w] = true
				case !errors.Is(err, storage.ErrExists):
					errs[w] = err
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		winner := soleWinner(t, round, won)
		got, _ := mustGet(t, s, dst)
		switch {
		case winner%2 == 1 && got != "put:"+strconv.Itoa(winner):
			t.Fatalf("round %d: put winner %d, object %q", round, winner, got)
		case winner%2 == 0 && !wholeVersion(got):
			t.Fatalf("round %d: copy holds %q, not one version of the source", round, got)
		}
	}
}

// wholeVersion reports whether b is one of the writer's versions of the
// source in testCopyIfAbsentRace: "v:<i>" then i%7 dots.
func wholeVersion(b string) bool {
	rest, ok := strings.CutPrefix(b, "v:")
	digits := strings.TrimRight(rest, ".")
	i, err := strconv.Atoi(digits)
	return ok && err == nil && rest[len(digits):] == strings.Repeat(".", i%7)
}
