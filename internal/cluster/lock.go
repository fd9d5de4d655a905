package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Lock is __cluster/lock.json: held by plan, apply, import and refresh
// while they run (state.lock: true), created with PutIfAbsent so exactly
// one command holds it. Nothing breaks a lock but force-unlock with its id.
type Lock struct {
	Version   int    `json:"version"`
	LockID    string `json:"lock_id"`
	Operation string `json:"operation"`
	CreatedAt int64  `json:"created_at"` // Unix microseconds
	PID       int    `json:"pid,omitempty"`
}

// LockInfo is a lock as reported by plan and status.
type LockInfo struct {
	LockID        string `json:"lock_id"`
	LockOperation string `json:"lock_operation"`
	LockCreatedAt int64  `json:"lock_created_at"`
	LockPID       int    `json:"lock_pid,omitempty"`
	LockAgeSecs   int64  `json:"lock_age_seconds"`
}

// ErrLocked: another cluster command holds the state lock.
var ErrLocked = errors.New("cluster state is locked")

func (l *Lock) info(now time.Time) *LockInfo {
	return &LockInfo{LockID: l.LockID, LockOperation: l.Operation, LockCreatedAt: l.CreatedAt, LockPID: l.PID,
		LockAgeSecs: int64(now.Sub(time.UnixMicro(l.CreatedAt)).Seconds())}
}

func readLock(ctx context.Context, st storage.Store) (*Lock, error) {
	raw, _, err := st.Get(ctx, lockKey)
	if err != nil {
		return nil, err
	}
	var l Lock
	if err := json.Unmarshal(raw, &l); err != nil || l.LockID == "" {
		return nil, fmt.Errorf("%s is not valid lock JSON", lockKey)
	}
	if l.Version != 1 {
		return nil, fmt.Errorf("%s has unsupported version %d", lockKey, l.Version)
	}
	return &l, nil
}

// acquireLock takes the lock for operation; release removes it only if it is
// still ours.
func acquireLock(ctx context.Context, st storage.Store, operation string, pid int) (*Lock, func(), error) {
	l := &Lock{Version: 1, LockID: ulid.Make().String(), Operation: operation, CreatedAt: time.Now().UnixMicro(), PID: pid}
	raw, _ := json.Marshal(l)
	if _, err := st.PutIfAbsent(ctx, lockKey, raw); err != nil {
		if errors.Is(err, storage.ErrExists) {
			held, rerr := readLock(ctx, st)
			if rerr != nil {
				return nil, nil, fmt.Errorf("%w (%v)", ErrLocked, rerr)
			}
			return nil, nil, fmt.Errorf("%w by %s (lock %s, pid %d); if no cluster command is running, run `omnigraph cluster force-unlock %s`",
				ErrLocked, held.Operation, held.LockID, held.PID, held.LockID)
		}
		return nil, nil, fmt.Errorf("acquire %s: %w", lockKey, err)
	}
	release := func() {
		// The lock is ours unless force-unlocked: delete only our lock.
		if cur, err := readLock(context.WithoutCancel(ctx), st); err == nil && cur.LockID == l.LockID {
			_ = st.Delete(context.WithoutCancel(ctx), lockKey)
		}
	}
	return l, release, nil
}
