package storage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// mailFiles lists the names in the mailboxes of the store at dir.
func mailFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".locks", "mail-*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(p))
	}
	slices.Sort(out)
	return out
}

// TestLocalMailbox: a proposal is claimed or withdrawn, never both; claims
// take the oldest first, whole; receipts answer several proposals at once,
// a final one hiding the pending one; Forget leaves nothing; stale files
// are swept; ids that are not one file name are refused.
func TestLocalMailbox(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	mb, ok := storage.MailboxOf(storage.NewBatching(storage.NewCounting(l)))
	if !ok {
		t.Fatal("MailboxOf does not find Local under its wrappers")
	}
	const name = "refs/heads/main"
	for _, id := range []string{"01A", "01B", "01C"} {
		if err := mb.Propose(name, id, []byte("write "+id)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := mb.Withdraw(name, "01B"); err != nil || !ok {
		t.Fatalf("withdraw of an unclaimed proposal: %v %v", ok, err)
	}
	got, err := mb.Claim(name, 1)
	if err != nil || len(got) != 1 || got[0].ID != "01A" || string(got[0].Data) != "write 01A" {
		t.Fatalf("claim 1: %+v %v", got, err)
	}
	got, err = mb.Claim(name, 10)
	if err != nil || len(got) != 1 || got[0].ID != "01C" {
		t.Fatalf("claim the rest: %+v %v", got, err)
	}
	if ok, err := mb.Withdraw(name, "01A"); err != nil || ok {
		t.Fatalf("withdraw of a claimed proposal: %v %v", ok, err)
	}
	if _, _, err := mb.Receipt(name, "01A"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("receipt before any reply: %v", err)
	}
	if err := mb.Reply(name, []string{"01A", "01C"}, false, []byte("pending")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"01A", "01C"} {
		if data, final, err := mb.Receipt(name, id); err != nil || final || string(data) != "pending" {
			t.Fatalf("pending receipt of %s: %q %v %v", id, data, final, err)
		}
	}
	if err := mb.Reply(name, []string{"01A", "01C"}, false, []byte("pending 2")); err != nil {
		t.Fatal(err) // a later round replaces it
	}
	if err := mb.Reply(name, []string{"01A", "01C"}, true, []byte("final")); err != nil {
		t.Fatal(err)
	}
	if data, final, err := mb.Receipt(name, "01C"); err != nil || !final || string(data) != "final" {
		t.Fatalf("final receipt: %q %v %v", data, final, err)
	}
	for _, id := range []string{"01A", "01C"} {
		if err := mb.Forget(name, id); err != nil {
			t.Fatal(err)
		}
	}
	if left := mailFiles(t, dir); len(left) != 0 {
		t.Fatalf("after Forget: %v", left)
	}

	// Stale receipts and claims of a proposer that never came back.
	if err := mb.Propose(name, "01D", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Claim(name, 1); err != nil {
		t.Fatal(err)
	}
	if err := mb.Reply(name, []string{"01D"}, true, []byte("final")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	m, _ := filepath.Glob(filepath.Join(dir, ".locks", "mail-*", "*"))
	for _, p := range m {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := mb.Propose(name, "01E", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Claim(name, 0); err != nil {
		t.Fatal(err)
	}
	if left := mailFiles(t, dir); !slices.Equal(left, []string{"p-01E"}) {
		t.Fatalf("after the sweep: %v, want the fresh proposal only", left)
	}

	for _, id := range []string{"", "../x", "a/b", ".hidden"} {
		if err := mb.Propose(name, id, nil); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Propose(%q) = %v, want ErrInvalidKey", id, err)
		}
	}
}

// TestLocalMailboxClaimOrWithdraw: racing a claim and a withdrawal of one
// proposal, exactly one wins, every time.
func TestLocalMailboxClaimOrWithdraw(t *testing.T) {
	l, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const name = "refs/heads/main"
	for i := range 200 {
		id := fmt.Sprintf("%04d", i)
		if err := l.Propose(name, id, nil); err != nil {
			t.Fatal(err)
		}
		var claimed []storage.Proposal
		var withdrawn bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); claimed, _ = l.Claim(name, 1) }()
		go func() { defer wg.Done(); withdrawn, _ = l.Withdraw(name, id) }()
		wg.Wait()
		if (len(claimed) == 1) == withdrawn {
			t.Fatalf("round %d: claimed %v, withdrawn %v", i, claimed, withdrawn)
		}
		if err := l.Forget(name, id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalTryTurn: the turn is taken when free, reported busy while
// another process holds it, and in-process while this process does.
func TestLocalTryTurn(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	const name = "refs/heads/main"
	release, st, err := l.TryTurn(name)
	if err != nil || st != storage.TurnTaken {
		t.Fatalf("free turn: %v %v", st, err)
	}
	r2, st, err := l.TryTurn(name)
	if err != nil || st != storage.TurnInProcess {
		t.Fatalf("held by this process: %v %v", st, err)
	}
	r2()
	_, own, err := l.Turn(context.Background(), name)
	if err != nil || own {
		t.Fatalf("Turn while this process holds it: own %v, %v", own, err)
	}
	release()

	cmd, stdin := startTurnHolder(t, dir)
	if _, st, err := l.TryTurn(name); err != nil || st != storage.TurnBusy {
		t.Fatalf("held by another process: %v %v", st, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	release, own, err = l.Turn(context.Background(), name)
	if err != nil || !own {
		t.Fatalf("after the other process: own %v, %v", own, err)
	}
	release()
}
