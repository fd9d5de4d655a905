package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Turns and the mailbox of a local directory (Serializer, Mailbox):
//
//   - the turn on a name is an exclusive flock on
//     <root>/.locks/serial-<fnv32a of name>;
//   - the mailbox of a name is the directory <root>/.locks/mail-<same
//     hash>, holding p-<id> (a proposal), c-<id> (a proposal its turn's
//     holder claimed), q-<id> (its pending receipt) and r-<id> (its final
//     receipt); the receipts of one batch are links to one file. Each name
//     appears whole, by rename from a .tmp- name of the same directory;
//     nothing is fsynced:
//     the files speak only between processes of one machine, which a
//     machine crash ends together.
//
// Receipts and claimed proposals a proposer never collected (it died) are
// removed by Claim once they are older than staleMail.

// staleMail is the age after which Claim removes a receipt or a claimed
// proposal nobody collected.
const staleMail = 10 * time.Minute

// turnName is the file name shared by name's turn and its mailbox.
func turnName(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}

func (l *Local) turnPath(name string) string {
	return filepath.Join(l.root, lockDir, "serial-"+turnName(name))
}

func (l *Local) mailDir(name string) string {
	return filepath.Join(l.root, lockDir, "mail-"+turnName(name))
}

// Serialize implements Serializer: it holds an exclusive flock on name's
// turn file until release. It is cooperative and machine-local: writers in
// several processes on one graph directory take turns instead of racing the
// ref CAS, which decides correctness whatever happens here. Waiting blocks
// in the kernel (the turn passes the moment it is released), ends with ctx,
// and is not FIFO; a process that dies holding it releases it with its
// descriptors. Inside one process turns are not taken: when another handle
// of this process holds the name, Serialize returns at once with a no-op
// release (the handles race by CAS as before), so a holder can never wait
// for itself.
func (l *Local) Serialize(ctx context.Context, name string) (release func(), err error) {
	release, _, err = l.Turn(ctx, name)
	return release, err
}

// Turn implements Mailbox: Serialize, reporting whether the caller now
// holds the turn (own) or another handle of this process does (the release
// is then a no-op).
func (l *Local) Turn(ctx context.Context, name string) (release func(), own bool, err error) {
	lf, unhold, err := l.openTurn(name)
	if lf == nil {
		return unhold, false, err // a no-op release, or an error
	}
	// A blocking flock, so that the kernel hands the turn over the moment
	// its holder releases it; polling with LOCK_NB left the branch idle
	// for up to the poll interval at every handoff, which with several
	// processes writing one at a time was a quarter of the wall time. The
	// wait itself cannot be interrupted, so it runs on its own goroutine:
	// a caller whose context ends returns at once, and a turn granted
	// after that is released as soon as it is granted.
	fd := int(lf.Fd())
	granted := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(fd, unix.LOCK_EX)
			if err != unix.EINTR {
				granted <- err
				return
			}
		}
	}()
	select {
	case err := <-granted:
		if err != nil {
			lf.Close()
			unhold()
			return nil, false, err
		}
		return func() { lf.Close(); unhold() }, true, nil // closing releases the flock
	case <-ctx.Done():
		unhold()
		go func() {
			<-granted
			lf.Close() // releases a turn granted too late, or frees the descriptor
		}()
		return nil, false, ctx.Err()
	}
}

// TryTurn implements Mailbox: it takes name's turn only if nobody holds it
// now, without waiting.
func (l *Local) TryTurn(name string) (release func(), st TurnState, err error) {
	lf, unhold, err := l.openTurn(name)
	switch {
	case err != nil:
		return nil, 0, err
	case lf == nil:
		return unhold, TurnInProcess, nil
	}
	for {
		err = unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		return func() { lf.Close(); unhold() }, TurnTaken, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		lf.Close()
		unhold()
		return nil, TurnBusy, nil
	default:
		lf.Close()
		unhold()
		return nil, 0, err
	}
}

// openTurn opens name's turn file, marked as held by this process (unhold
// takes the mark back). If this process holds it already, lf is nil and
// unhold a no-op release.
func (l *Local) openTurn(name string) (lf *os.File, unhold func(), err error) {
	path := l.turnPath(name)
	unhold, ok := holdSerial(path)
	if !ok {
		return nil, func() {}, nil
	}
	if lf, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		unhold()
		return nil, nil, err
	}
	return lf, unhold, nil
}

// holdSerial marks path as held by this process; false if it already is.
func holdSerial(path string) (unhold func(), ok bool) {
	serialMu.Lock()
	defer serialMu.Unlock()
	if serialHeld[path] {
		return nil, false
	}
	serialHeld[path] = true
	return func() {
		serialMu.Lock()
		delete(serialHeld, path)
		serialMu.Unlock()
	}, true
}

// serialHeld marks the turn files this process holds.
var (
	serialMu   sync.Mutex
	serialHeld = map[string]bool{}
)

// Mailbox file prefixes (one path element each: <prefix><id>).
const (
	mailProposal = "p-"
	mailClaimed  = "c-"
	mailReceipt  = "r-"
	mailPending  = "q-"
)

// checkMailID refuses an id that is not one plain file name element.
func checkMailID(id string) error {
	if id == "" || strings.ContainsAny(id, "/\\") || strings.HasPrefix(id, ".") || len(id) > 128 {
		return fmt.Errorf("storage: mailbox id %q: %w", id, ErrInvalidKey)
	}
	return nil
}

// writeMail makes dir/name appear whole with data (rename from a temp file).
func writeMail(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, TempPrefix+name)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Propose implements Mailbox.
func (l *Local) Propose(name, id string, data []byte) error {
	if err := checkMailID(id); err != nil {
		return err
	}
	return writeMail(l.mailDir(name), mailProposal+id, data)
}

// Withdraw implements Mailbox.
func (l *Local) Withdraw(name, id string) (bool, error) {
	if err := checkMailID(id); err != nil {
		return false, err
	}
	err := os.Remove(filepath.Join(l.mailDir(name), mailProposal+id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// Claim implements Mailbox. Proposals are taken oldest id first; a
// proposal withdrawn meanwhile is skipped. It also removes receipts and
// claimed proposals older than staleMail (their proposer is gone).
func (l *Local) Claim(name string, max int) ([]Proposal, error) {
	dir := l.mailDir(name)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Proposal
	for _, e := range ents { // ReadDir sorts by name
		n := e.Name()
		switch {
		case strings.HasPrefix(n, mailProposal) && len(out) < max:
			id := strings.TrimPrefix(n, mailProposal)
			claimed := filepath.Join(dir, mailClaimed+id)
			if err := os.Rename(filepath.Join(dir, n), claimed); errors.Is(err, fs.ErrNotExist) {
				continue // withdrawn
			} else if err != nil {
				return out, err
			}
			data, err := os.ReadFile(claimed)
			if err != nil {
				return out, err
			}
			out = append(out, Proposal{ID: id, Data: data})
		case strings.HasPrefix(n, mailReceipt), strings.HasPrefix(n, mailPending), strings.HasPrefix(n, mailClaimed), strings.HasPrefix(n, TempPrefix):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleMail {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
	return out, nil
}

// Reply implements Mailbox: one file holds the receipt, linked under each
// id's name (a pending receipt as q-<id>, a final one as r-<id>), so a
// batch's receipts cost one new file whatever the proposals it answers.
func (l *Local) Reply(name string, ids []string, final bool, receipt []byte) error {
	for _, id := range ids {
		if err := checkMailID(id); err != nil {
			return err
		}
	}
	dir := l.mailDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, TempPrefix+"receipt-"+ids[0])
	if err := os.WriteFile(base, receipt, 0o644); err != nil {
		return err
	}
	defer os.Remove(base)
	prefix := mailPending
	if final {
		prefix = mailReceipt
	}
	for _, id := range ids {
		// Linked under a temporary name, then renamed over what the id
		// had (a pending receipt a later round replaces).
		tmp := filepath.Join(dir, TempPrefix+"link-"+id)
		os.Remove(tmp)
		if err := os.Link(base, tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, prefix+id)); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

// Receipt implements Mailbox.
func (l *Local) Receipt(name, id string) ([]byte, bool, error) {
	if err := checkMailID(id); err != nil {
		return nil, false, err
	}
	dir := l.mailDir(name)
	data, err := os.ReadFile(filepath.Join(dir, mailReceipt+id))
	if err == nil {
		return data, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	data, err = os.ReadFile(filepath.Join(dir, mailPending+id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("storage: receipt %s: %w", id, ErrNotFound)
	}
	return data, false, err
}

// Forget implements Mailbox.
func (l *Local) Forget(name, id string) error {
	if err := checkMailID(id); err != nil {
		return err
	}
	dir := l.mailDir(name)
	var errs []error
	for _, n := range []string{mailReceipt + id, mailPending + id, mailClaimed + id, mailProposal + id} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mailNames lists the mailbox of name (tests).
func (l *Local) mailNames(name string) []string {
	ents, _ := os.ReadDir(l.mailDir(name))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}
