package storage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestFaultyFaults(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name  string
		fault storage.Fault
		// run performs the request sequence and returns the error of each call.
		calls       []string // keys to Put, in order
		wantErr     []bool
		wantVisible []bool // does the key exist afterwards
		wantIs      error
	}{
		{
			name:        "before put: nothing written",
			fault:       storage.Fault{Op: storage.OpPut},
			calls:       []string{"a", "b"},
			wantErr:     []bool{true, true},
			wantVisible: []bool{false, false},
			wantIs:      failpoint.ErrInjected,
		},
		{
			name:        "after put: written but reported failed",
			fault:       storage.Fault{Op: storage.OpPut, Stage: storage.After, Err: errBoom},
			calls:       []string{"a"},
			wantErr:     []bool{true},
			wantVisible: []bool{true},
			wantIs:      errBoom,
		},
		{
			name:        "Nth with prefix",
			fault:       storage.Fault{Op: storage.OpPut, Prefix: "frag/", Nth: 2},
			calls:       []string{"frag/1", "other", "frag/2", "frag/3"},
			wantErr:     []bool{false, false, true, false},
			wantVisible: []bool{true, true, false, true},
			wantIs:      failpoint.ErrInjected,
		},
		{
			name:        "other op unaffected",
			fault:       storage.Fault{Op: storage.OpDelete},
			calls:       []string{"a"},
			wantErr:     []bool{false},
			wantVisible: []bool{true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			mem := storage.NewMem()
			f := storage.NewFaulty(mem)
			f.Inject(tc.fault)
			for i, key := range tc.calls {
				_, err := f.Put(ctx, key, []byte("x"))
				if (err != nil) != tc.wantErr[i] {
					t.Fatalf("Put(%q) err = %v, want error %v", key, err, tc.wantErr[i])
				}
				if err != nil {
					var se *storage.Error
					if !errors.Is(err, tc.wantIs) || !errors.As(err, &se) || se.Key != key {
						t.Fatalf("Put(%q) err = %v, want *storage.Error wrapping %v", key, err, tc.wantIs)
					}
				}
				_, err = mem.Stat(ctx, key)
				if visible := err == nil; visible != tc.wantVisible[i] {
					t.Fatalf("%q visible = %v, want %v", key, visible, tc.wantVisible[i])
				}
			}
		})
	}
}

// TestFaultyLostCASResponse shows the retry hazard callers must handle: the
// PutIfMatch landed, the caller saw a 412.
func TestFaultyLostCASResponse(t *testing.T) {
	ctx := t.Context()
	f := storage.NewFaulty(storage.NewMem())
	v1, _ := f.Put(ctx, "ref", []byte("c1"))
	remove := f.Inject(storage.Fault{Op: storage.OpPutIfMatch, Stage: storage.After, Err: storage.ErrPrecondition})
	_, err := f.PutIfMatch(ctx, "ref", []byte("c2"), v1.ETag)
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("err = %v, want ErrPrecondition", err)
	}
	remove()
	if b, _, _ := f.Get(ctx, "ref"); string(b) != "c2" {
		t.Fatalf("ref = %q, want the write that reported 412 (c2)", b)
	}
}

func TestFaultyHookAndReadAt(t *testing.T) {
	ctx := t.Context()
	f := faultyHolding(t, "frag", "0123456789")
	type call struct {
		op    storage.Op
		stage storage.Stage
	}
	var seen []call
	errRead := errors.New("read failed")
	f.SetHook(func(_ context.Context, op storage.Op, key string, st storage.Stage) error {
		seen = append(seen, call{op, st})
		if op == storage.OpGetRange && st == storage.Before && len(seen) > 3 {
			return errRead
		}
		return nil
	})
	r, err := storage.OpenReadAt(ctx, f, "frag")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := make([]byte, 4)
	if _, err := r.ReadAt(p, 0); err != nil {
		t.Fatalf("first ReadAt: %v", err)
	}
	if _, err := r.ReadAt(p, 4); !errors.Is(err, errRead) {
		t.Fatalf("second ReadAt: err = %v, want hook error", err)
	}
	want := []call{{storage.OpStat, storage.Before}, {storage.OpStat, storage.After},
		{storage.OpGetRange, storage.Before}, {storage.OpGetRange, storage.After}, {storage.OpGetRange, storage.Before}}
	if len(seen) != len(want) {
		t.Fatalf("hook saw %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("hook saw %v, want %v", seen, want)
		}
	}
	f.Clear()
	if _, err := r.ReadAt(p, 8); err != io.EOF {
		t.Fatalf("ReadAt after Clear: %v, want io.EOF (short read)", err)
	}
}

// TestFaultyFailpoints: every op consults storage/before-<op> and storage/after-<op>.
func TestFaultyFailpoints(t *testing.T) {
	ctx := t.Context()
	f := faultyHolding(t, "k", "v")
	info, _ := f.Stat(ctx, "k")
	n := 0
	fl := storage.NewFaulty(newLocal(t)) // Mem cannot share one object among names
	calls := map[storage.Op]func() error{
		storage.OpGet:         func() error { _, _, err := f.Get(ctx, "k"); return err },
		storage.OpGetRange:    func() error { _, err := f.GetRange(ctx, "k", 0, 1); return err },
		storage.OpStat:        func() error { _, err := f.Stat(ctx, "k"); return err },
		storage.OpPut:         func() error { _, err := f.Put(ctx, "k2", []byte("v")); return err },
		storage.OpPutIfAbsent: func() error { _, err := f.PutIfAbsent(ctx, "k3", []byte("v")); return err },
		storage.OpPutIfMatch:  func() error { _, err := f.PutIfMatch(ctx, "k", []byte("v"), info.ETag); return err },
		storage.OpList:        func() error { return f.List(ctx, "", "", func(storage.Info) error { return nil }) },
		storage.OpDelete:      func() error { return f.Delete(ctx, "k4") },
		storage.OpSweepTemp: func() error {
			_, err := f.SweepTemp(ctx, time.Now(), true)
			return err
		},
		storage.OpCopyIfAbsent: func() error {
			n++
			_, err := f.CopyIfAbsent(ctx, "k", fmt.Sprintf("copy-%d", n))
			return err
		},
		storage.OpPutShared: func() error {
			n++
			return fl.PutShared(ctx, []string{fmt.Sprintf("s-%d", n), fmt.Sprintf("t-%d", n)}, []byte("v"))
		},
	}
	for _, op := range storage.Ops() {
		for _, stage := range []string{"before", "after"} {
			name := "storage/" + stage + "-" + string(op)
			t.Run(name, func(t *testing.T) {
				off := failpoint.Enable(name, failpoint.Error)
				defer off()
				err := calls[op]()
				if !errors.Is(err, failpoint.ErrInjected) {
					t.Fatalf("err = %v, want injected", err)
				}
				if failpoint.Hits(name) == 0 {
					t.Fatal("failpoint not hit")
				}
				if stage == "after" && op == storage.OpPutIfMatch {
					// The CAS landed: refresh the ETag for later cases.
					info, _ = f.Stat(ctx, "k")
				}
			})
		}
	}
}

// faultyHolding returns a Faulty in-memory store holding key = val.
func faultyHolding(t *testing.T, key, val string) *storage.Faulty {
	t.Helper()
	f := storage.NewFaulty(storage.NewMem())
	if _, err := f.Put(t.Context(), key, []byte(val)); err != nil {
		t.Fatal(err)
	}
	return f
}
