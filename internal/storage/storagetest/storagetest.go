package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Run runs the conformance suite. newStore must return an empty store; it is
// called once per subtest.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"PutGetStat", testPutGetStat},
		{"Overwrite", testOverwrite},
		{"Isolation", testIsolation},
		{"GetRange", testGetRange},
		{"NotFound", testNotFound},
		{"InvalidKeys", testInvalidKeys},
		{"List", testList},
		{"ListPaging", testListPaging},
		{"ListStops", testListStops},
		{"ListReentrant", testListReentrant},
		{"Delete", testDelete},
		{"Cancelled", testCancelled},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfMatch", testPutIfMatch},
		{"OpenReadAt", testOpenReadAt},
		{"PutIfAbsentRace", testPutIfAbsentRace},
		{"CASChain", testCASChain},
		{"CopyIfAbsent", testCopyIfAbsent},
		{"CopyIfAbsentRace", testCopyIfAbsentRace},
		{"PutShared", testPutShared},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func mustPut(t *testing.T, s storage.Store, key, data string) storage.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, []byte(data))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

func mustGet(t *testing.T, s storage.Store, key string) (string, storage.Info) {
	t.Helper()
	b, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(b), info
}

// sameInfo compares what must agree between calls (ModTime resolution may differ).
func sameInfo(t *testing.T, what string, got, want storage.Info) {
	t.Helper()
	if got.Key != want.Key || got.Size != want.Size || got.ETag != want.ETag {
		t.Errorf("%s: info = {%q %d %q}, want {%q %d %q}", what, got.Key, got.Size, got.ETag, want.Key, want.Size, want.ETag)
	}
	if got.ModTime.IsZero() {
		t.Errorf("%s: zero ModTime", what)
	}
}

func testPutGetStat(t *testing.T, s storage.Store) {
	for _, tc := range []struct{ name, key, data string }{
		{"top level", "obj", "hello"},
		{"nested", "a/b/c/obj.parquet", "nested bytes"},
		{"empty object", "empty", ""},
		{"dotted names", "x/.hidden/..y/z.", "dots are fine unless a whole segment"},
		{"unicode", "ünï/cødé", "✓"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put := mustPut(t, s, tc.key, tc.data)
			sameInfo(t, "Put", put, storage.Info{Key: tc.key, Size: int64(len(tc.data)), ETag: put.ETag})
			if put.ETag == "" {
				t.Fatal("empty ETag")
			}
			got, info := mustGet(t, s, tc.key)
			if got != tc.data {
				t.Errorf("Get = %q, want %q", got, tc.data)
			}
			sameInfo(t, "Get", info, put)
			st, err := s.Stat(t.Context(), tc.key)
			if err != nil {
				t.Fatal(err)
			}
			sameInfo(t, "Stat", st, put)
		})
	}
}

func testOverwrite(t *testing.T, s storage.Store) {
	first := mustPut(t, s, "k", "one")
	second := mustPut(t, s, "k", "two, longer")
	if first.ETag == second.ETag {
		t.Fatalf("ETag %q unchanged after overwrite with different bytes", first.ETag)
	}
	got, info := mustGet(t, s, "k")
	if got != "two, longer" {
		t.Fatalf("Get = %q", got)
	}
	sameInfo(t, "Get", info, second)
}

func testIsolation(t *testing.T, s storage.Store) {
	in := []byte("original")
	if _, err := s.Put(t.Context(), "k", in); err != nil {
		t.Fatal(err)
	}
	copy(in, "XXXXXXXX")
	out, _, err := s.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "original" {
		t.Fatalf("store aliased the Put buffer: %q", out)
	}
	copy(out, "YYYYYYYY")
	if got, _ := mustGet(t, s, "k"); got != "original" {
		t.Fatalf("store aliased the Get buffer: %q", got)
	}
}

func testGetRange(t *testing.T, s storage.Store) {
	const data = "0123456789"
	mustPut(t, s, "r", data)
	for _, tc := range []struct {
		name        string
		off, length int64
		want        string
		wantErr     bool
	}{
		{"whole", 0, 10, "0123456789", false},
		{"middle", 3, 4, "3456", false},
		{"clipped at end", 8, 100, "89", false},
		{"zero length", 5, 0, "", false},
		{"at end", 10, 5, "", false},
		{"past end", 50, 5, "", false},
		{"negative offset", -1, 5, "", true},
		{"negative length", 0, -1, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.GetRange(t.Context(), "r", tc.off, tc.length)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("GetRange(%d,%d) = %q, want error", tc.off, tc.length, got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("GetRange(%d,%d) = %q, %v; want %q", tc.off, tc.length, got, err, tc.want)
			}
		})
	}
}

func wantKeyErr(t *testing.T, what string, err error, sentinel error, key string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: err = %v, want %v", what, err, sentinel)
	}
	var se *storage.Error
	if !errors.As(err, &se) || se.Key != key {
		t.Fatalf("%s: err = %#v, want *storage.Error naming %q", what, err, key)
	}
}

// keyOp is one single-key operation of a store, run for its error.
type keyOp struct {
	name string
	run  func(ctx context.Context, s storage.Store, key string) error
}

// keyReads are the reads of one key: Get, GetRange, Stat and OpenReadAt.
func keyReads() []keyOp {
	return []keyOp{
		{"Get", func(ctx context.Context, s storage.Store, key string) error { _, _, err := s.Get(ctx, key); return err }},
		{"GetRange", func(ctx context.Context, s storage.Store, key string) error {
			_, err := s.GetRange(ctx, key, 0, 1)
			return err
		}},
		{"Stat", func(ctx context.Context, s storage.Store, key string) error { _, err := s.Stat(ctx, key); return err }},
		{"OpenReadAt", func(ctx context.Context, s storage.Store, key string) error {
			_, err := storage.OpenReadAt(ctx, s, key)
			return err
		}},
	}
}

// keyWrites are the writes of one key: the three puts and Delete.
func keyWrites() []keyOp {
	return []keyOp{
		{"Put", func(ctx context.Context, s storage.Store, key string) error {
			_, err := s.Put(ctx, key, nil)
			return err
		}},
		{"PutIfAbsent", func(ctx context.Context, s storage.Store, key string) error {
			_, err := s.PutIfAbsent(ctx, key, nil)
			return err
		}},
		{"PutIfMatch", func(ctx context.Context, s storage.Store, key string) error {
			_, err := s.PutIfMatch(ctx, key, nil, "e")
			return err
		}},
		{"Delete", func(ctx context.Context, s storage.Store, key string) error { return s.Delete(ctx, key) }},
	}
}

// wantKeyErrs runs every op on key and requires each error to be sentinel
// as a *storage.Error naming key.
func wantKeyErrs(t *testing.T, s storage.Store, key string, sentinel error, ops []keyOp) {
	t.Helper()
	for _, op := range ops {
		wantKeyErr(t, op.name, op.run(t.Context(), s, key), sentinel, key)
	}
}

func testNotFound(t *testing.T, s storage.Store) {
	mustPut(t, s, "dir/file", "x")
	for _, key := range []string{"missing", "dir/missing", "nodir/x", "dir", "dir/file/below"} {
		t.Run(key, func(t *testing.T) {
			wantKeyErrs(t, s, key, storage.ErrNotFound, append(keyReads(), keyOp{"PutIfMatch", func(ctx context.Context, s storage.Store, key string) error {
				_, err := s.PutIfMatch(ctx, key, []byte("y"), "some-etag")
				return err
			}}))
		})
	}
}

// InvalidKeys returns keys every backend must reject with ErrInvalidKey.
func InvalidKeys() []string {
	return []string{
		"", "/abs", "trailing/", "a//b", ".", "..", "a/./b", "a/../b", "../escape", "a/..",
		"nul\x00byte", "bad\xffutf8", strings.Repeat("k", storage.MaxKeyLen+1),
		".tmp-x", "a/.tmp-123", ".locks/00", ".lock", "a/.lockfile",
	}
}

func testInvalidKeys(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for _, key := range InvalidKeys() {
		t.Run(fmt.Sprintf("%.20q", key), func(t *testing.T) {
			if err := storage.ValidateKey(key); !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("ValidateKey: %v", err)
			}
			wantKeyErrs(t, s, key, storage.ErrInvalidKey, append(keyReads(), keyWrites()...))
		})
	}
	for _, prefix := range []string{"/abs", "a//b", "../x", "a/../", "x\x00"} {
		err := s.List(ctx, prefix, "", func(storage.Info) error { return nil })
		if !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("List(prefix %q): err = %v, want ErrInvalidKey", prefix, err)
		}
	}
}

func listKeys(t *testing.T, s storage.Store, prefix, startAfter string) []string {
	t.Helper()
	keys := []string{}
	err := s.List(t.Context(), prefix, startAfter, func(info storage.Info) error {
		keys = append(keys, info.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q, %q): %v", prefix, startAfter, err)
	}
	return keys
}

func testList(t *testing.T, s storage.Store) {
	// '-' < '.' < '/' < '0': a filesystem walk in directory order gets this wrong.
	all := []string{"A", "a-b", "a.b", "a/x", "a/y/z", "a0", "ab/c", "b"}
	for _, k := range []string{"b", "a/y/z", "A", "a0", "a/x", "a.b", "ab/c", "a-b"} {
		mustPut(t, s, k, "v:"+k)
	}
	for _, tc := range []struct {
		name, prefix, startAfter string
		want                     []string
	}{
		{"all", "", "", all},
		{"partial segment prefix", "a", "", []string{"a-b", "a.b", "a/x", "a/y/z", "a0", "ab/c"}},
		{"directory prefix", "a/", "", []string{"a/x", "a/y/z"}},
		{"deep prefix", "a/y", "", []string{"a/y/z"}},
		{"prefix equal to a key", "a/x", "", []string{"a/x"}},
		{"prefix below a key", "a/x/", "", []string{}},
		{"missing directory", "nope/", "", []string{}},
		{"missing partial", "zz", "", []string{}},
		{"start after a key", "", "a.b", []string{"a/x", "a/y/z", "a0", "ab/c", "b"}},
		{"start after a non-key", "", "a/", []string{"a/x", "a/y/z", "a0", "ab/c", "b"}},
		{"start after inside a dir", "", "a/y", []string{"a/y/z", "a0", "ab/c", "b"}},
		{"start after the last", "", "b", []string{}},
		{"start after everything", "", "zzz", []string{}},
		{"start after before prefix", "a/", "A", []string{"a/x", "a/y/z"}},
		{"start after within prefix", "a", "a/x", []string{"a/y/z", "a0", "ab/c"}},
		{"start after beyond prefix", "a/", "a0", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := listKeys(t, s, tc.prefix, tc.startAfter); !slices.Equal(got, tc.want) {
				t.Fatalf("List(%q, %q) = %q, want %q", tc.prefix, tc.startAfter, got, tc.want)
			}
		})
	}
	t.Run("infos match Stat", func(t *testing.T) {
		err := s.List(t.Context(), "", "", func(info storage.Info) error {
			st, err := s.Stat(t.Context(), info.Key)
			if err != nil {
				return err
			}
			sameInfo(t, "List "+info.Key, info, st)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func testListPaging(t *testing.T, s storage.Store) {
	const n = 150 // more than two internal pages of the memory backend
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("p/%02d/%04d", i%7, i))
	}
	// Concurrent puts overlap their fsyncs on durable backends.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if _, err := s.Put(t.Context(), want[i], []byte("x")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(want)
	if got := listKeys(t, s, "p/", ""); !slices.Equal(got, want) {
		t.Fatalf("List = %d keys, want %d sorted keys", len(got), len(want))
	}
	// Page through with StartAfter like a ListObjectsV2 client.
	var got []string
	cursor := ""
	for {
		page := []string{}
		errFull := errors.New("page full")
		err := s.List(t.Context(), "p/", cursor, func(info storage.Info) error {
			page = append(page, info.Key)
			if len(page) == 37 {
				return errFull
			}
			return nil
		})
		if err != nil && err != errFull {
			t.Fatal(err)
		}
		got = append(got, page...)
		if err == nil {
			break
		}
		cursor = page[len(page)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged List = %d keys, want %d", len(got), len(want))
	}
}

func testListStops(t *testing.T, s storage.Store) {
	for _, k := range []string{"a", "b", "c/d", "e"} {
		mustPut(t, s, k, "x")
	}
	stop := errors.New("stop here")
	var seen []string
	err := s.List(t.Context(), "", "", func(info storage.Info) error {
		seen = append(seen, info.Key)
		if info.Key == "c/d" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("List returned %v, want fn's error unchanged", err)
	}
	if !slices.Equal(seen, []string{"a", "b", "c/d"}) {
		t.Fatalf("List visited %q after stop", seen)
	}
}

// testListReentrant: fn may call the store (including writes) without deadlock.
func testListReentrant(t *testing.T, s storage.Store) {
	for _, k := range []string{"l/a", "l/b"} {
		mustPut(t, s, k, "x")
	}
	err := s.List(t.Context(), "l/", "", func(info storage.Info) error {
		if _, _, err := s.Get(t.Context(), info.Key); err != nil {
			return err
		}
		_, err := s.Put(t.Context(), "other/"+info.Key, []byte("y"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	mustPut(t, s, "d/k", "x")
	for i := range 2 { // the second delete is of a missing key
		if err := s.Delete(ctx, "d/k"); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	if _, _, err := s.Get(ctx, "d/k"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if got := listKeys(t, s, "", ""); len(got) != 0 {
		t.Fatalf("List after Delete = %q", got)
	}
	for _, key := range []string{"never", "no/such/dir"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Fatalf("Delete(%q) of missing: %v", key, err)
		}
	}
	// A deleted key can be created again, also conditionally.
	if _, err := s.PutIfAbsent(ctx, "d/k", []byte("again")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	// Deleting the last key under a prefix frees the prefix: it can then be
	// a key itself (a backend keeping directories must remove the empty ones,
	// so deleting branch a/b never blocks branch a).
	mustPut(t, s, "e/f/g", "x")
	mustPut(t, s, "e/h", "y")
	if err := s.Delete(ctx, "e/f/g"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "e/f", []byte("now a key")); err != nil {
		t.Fatalf("PutIfAbsent of a freed prefix: %v", err)
	}
	if got, _ := mustGet(t, s, "e/h"); got != "y" {
		t.Fatalf("sibling of a deleted key = %q", got)
	}
	for _, k := range []string{"d/k", "e/f", "e/h"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutIfAbsent(ctx, "e", []byte("top")); err != nil {
		t.Fatalf("PutIfAbsent of a freed top-level prefix: %v", err)
	}
}

func testCancelled(t *testing.T, s storage.Store) {
	mustPut(t, s, "exists", "old")
	info, _ := s.Stat(t.Context(), "exists")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"Get", func() error { _, _, err := s.Get(ctx, "exists"); return err }},
		{"GetRange", func() error { _, err := s.GetRange(ctx, "exists", 0, 1); return err }},
		{"Stat", func() error { _, err := s.Stat(ctx, "exists"); return err }},
		{"Put", func() error { _, err := s.Put(ctx, "new", []byte("x")); return err }},
		{"PutIfAbsent", func() error { _, err := s.PutIfAbsent(ctx, "new2", []byte("x")); return err }},
		{"PutIfMatch", func() error { _, err := s.PutIfMatch(ctx, "exists", []byte("x"), info.ETag); return err }},
		{"Delete", func() error { return s.Delete(ctx, "exists") }},
		{"List", func() error { return s.List(ctx, "", "", func(storage.Info) error { return nil }) }},
		{"OpenReadAt", func() error { _, err := storage.OpenReadAt(ctx, s, "exists"); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with cancelled ctx: err = %v, want context.Canceled", c.name, err)
		}
	}
	// Nothing changed.
	if got := listKeys(t, s, "", ""); !slices.Equal(got, []string{"exists"}) {
		t.Fatalf("keys after cancelled calls = %q", got)
	}
	if got, _ := mustGet(t, s, "exists"); got != "old" {
		t.Fatalf("exists = %q after cancelled calls", got)
	}
}

func testPutIfAbsent(t *testing.T, s storage.Store) {
	ctx := t.Context()
	first, err := s.PutIfAbsent(ctx, "refs/x", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stat(ctx, "refs/x")
	sameInfo(t, "PutIfAbsent", first, st)
	_, err = s.PutIfAbsent(ctx, "refs/x", []byte("second"))
	wantKeyErr(t, "second PutIfAbsent", err, storage.ErrExists, "refs/x")
	if got, info := mustGet(t, s, "refs/x"); got != "first" || info.ETag != first.ETag {
		t.Fatalf("after losing PutIfAbsent: %q %q", got, info.ETag)
	}
}

func testPutIfMatch(t *testing.T, s storage.Store) {
	ctx := t.Context()
	v1 := mustPut(t, s, "ref", "v1")
	v2, err := s.PutIfMatch(ctx, "ref", []byte("v2"), v1.ETag)
	if err != nil {
		t.Fatalf("PutIfMatch with current ETag: %v", err)
	}
	if v2.ETag == v1.ETag {
		t.Fatal("ETag unchanged by PutIfMatch")
	}
	st, _ := s.Stat(ctx, "ref")
	sameInfo(t, "PutIfMatch", v2, st)
	for _, tc := range []struct{ name, etag string }{
		{"stale", v1.ETag},
		{"garbage", "not-an-etag"},
		{"empty", ""},
	} {
		_, err := s.PutIfMatch(ctx, "ref", []byte("lost"), tc.etag)
		wantKeyErr(t, tc.name, err, storage.ErrPrecondition, "ref")
	}
	if got, _ := mustGet(t, s, "ref"); got != "v2" {
		t.Fatalf("ref = %q after failed PutIfMatch", got)
	}
	// A deleted object cannot be matched, not even with its last ETag.
	if err := s.Delete(ctx, "ref"); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutIfMatch(ctx, "ref", []byte("v3"), v2.ETag)
	wantKeyErr(t, "after delete", err, storage.ErrNotFound, "ref")
}

func testOpenReadAt(t *testing.T, s storage.Store) {
	data := bytes.Repeat([]byte("0123456789"), 100)
	if _, err := s.Put(t.Context(), "f/frag.parquet", data); err != nil {
		t.Fatal(err)
	}
	r, err := storage.OpenReadAt(t.Context(), s, "f/frag.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("Size = %d, want %d", r.Size(), len(data))
	}
	for _, tc := range []struct {
		name    string
		off     int64
		n       int
		wantN   int
		wantEOF bool
	}{
		{"start", 0, 10, 10, false},
		{"middle", 495, 10, 10, false},
		{"exact end", 990, 10, 10, false},
		{"across end", 995, 10, 5, true},
		{"at end", 1000, 10, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]byte, tc.n)
			n, err := r.ReadAt(p, tc.off)
			if n != tc.wantN || !bytes.Equal(p[:n], data[tc.off:tc.off+int64(n)]) {
				t.Fatalf("ReadAt(%d) = %d %q", tc.off, n, p[:n])
			}
			if tc.wantEOF != (err == io.EOF) || (!tc.wantEOF && err != nil) {
				t.Fatalf("ReadAt(%d) err = %v, want EOF %v", tc.off, err, tc.wantEOF)
			}
		})
	}
	// The whole object through io.SectionReader, as a Parquet reader would.
	all, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("ReadAll through ReadAt: %d bytes, %v", len(all), err)
	}
}
