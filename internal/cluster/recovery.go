package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Recovery operations.
const (
	opGraphCreate = "graph_create"
	opGraphDelete = "graph_delete"
)

// recovery is a sidecar __cluster/recoveries/<ulid>.json: the intent of a
// graph effect that lives outside state.json. A create's sidecar is written
// before the graph is initialized; a delete's before the state write that
// drops the graph (the root is removed after it). Both are removed once the
// effect and the state agree, so a crash at any point leaves a sidecar that
// the next state-mutating command resolves.
type recovery struct {
	Version      int    `json:"version"`
	ID           string `json:"id"`
	Operation    string `json:"operation"`
	Graph        string `json:"graph"`
	Root         string `json:"root"`
	SchemaDigest string `json:"schema_digest,omitempty"`
	Actor        string `json:"actor,omitempty"`
	CreatedAt    int64  `json:"created_at"`
}

func (r *recovery) key() string { return recoveryPrefix + r.ID + ".json" }

func writeRecovery(ctx context.Context, st storage.Store, r *recovery) error {
	r.Version, r.ID, r.CreatedAt = 1, ulid.Make().String(), time.Now().UnixMicro()
	raw, _ := json.Marshal(r)
	_, err := st.PutIfAbsent(ctx, r.key(), raw)
	return err
}

func listRecoveries(ctx context.Context, st storage.Store) ([]*recovery, error) {
	var out []*recovery
	err := st.List(ctx, recoveryPrefix, "", func(info storage.Info) error {
		if !strings.HasSuffix(info.Key, ".json") {
			return nil
		}
		raw, _, err := st.Get(ctx, info.Key)
		if err != nil {
			return err
		}
		var r recovery
		if err := json.Unmarshal(raw, &r); err != nil || r.ID == "" {
			return errors.New(info.Key + " is not a valid recovery sidecar")
		}
		out = append(out, &r)
		return nil
	})
	return out, err
}

// pendingRecoveries returns the graphs with a sidecar (read-only view).
func pendingRecoveries(ctx context.Context, st storage.Store) map[string]bool {
	out := map[string]bool{}
	rs, _ := listRecoveries(ctx, st)
	for _, r := range rs {
		out[r.Graph] = true
	}
	return out
}

// deleteRoot removes every object of a graph root (and, for a local root,
// the directories left empty). It is idempotent.
func deleteRoot(ctx context.Context, st storage.Store, root, id string) error {
	var keys []string
	if err := st.List(ctx, graphPrefix(id), "", func(info storage.Info) error {
		keys = append(keys, info.Key)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			return err
		}
	}
	if !isScheme(root) {
		return os.RemoveAll(GraphURI(root, id))
	}
	return nil
}

// sweepRecoveries resolves sidecars left by an interrupted command. It runs
// under the lock at the start of apply, import and refresh. Records are
// audit entries for the next state write.
func sweepRecoveries(ctx context.Context, st storage.Store, l *ledger, o Options) ([]Diagnostic, map[string]RecoveryRecord) {
	var diags []Diagnostic
	records := map[string]RecoveryRecord{}
	rs, err := listRecoveries(ctx, st)
	if err != nil {
		return []Diagnostic{errorf(CodeStorage, "", "list recovery sidecars: %v", err)}, nil
	}
	now := time.Now().UnixMicro()
	for _, r := range rs {
		addr := graphAddr(r.Graph)
		_, inState := l.state.AppliedRevision.Resources[addr]
		outcome := ""
		switch r.Operation {
		case opGraphCreate:
			switch lg := observeGraph(ctx, st, r.Graph, r.Root, o.GraphOptions); {
			case inState:
				outcome = "retired" // the state write landed
			case !lg.exists:
				outcome = "retired" // the init never happened
			case lg.err == nil && lg.schemaDigest == r.SchemaDigest:
				outcome = "rolled_forward" // init completed; the plan adopts the graph
			default:
				diags = append(diags, errorf(CodeGraphIncomplete, addr, "an interrupted create left %s unopenable: remove the root and re-run apply", r.Root))
				continue
			}
		case opGraphDelete:
			if inState {
				outcome = "retired" // the state write did not land: the delete is re-proposed
			} else {
				if err := deleteRoot(ctx, st, storageRootOf(r), r.Graph); err != nil {
					diags = append(diags, errorf(CodeGraphDeleteFailed, addr, "finish removing %s: %v", r.Root, err))
					continue
				}
				outcome = "rolled_forward"
			}
		default:
			diags = append(diags, errorf(CodeRecoveryPending, addr, "unknown recovery operation %q in %s", r.Operation, r.key()))
			continue
		}
		if err := st.Delete(ctx, r.key()); err != nil {
			diags = append(diags, errorf(CodeStorage, addr, "remove %s: %v", r.key(), err))
			continue
		}
		records[r.ID] = RecoveryRecord{Operation: r.Operation, Resource: addr, Outcome: outcome, RecordedAt: now}
		diags = append(diags, warnf(CodeRecoveryApplied, addr, "recovered an interrupted %s: %s", r.Operation, outcome))
	}
	return diags, records
}

// storageRootOf recovers the storage root from a sidecar's graph root.
func storageRootOf(r *recovery) string {
	if isScheme(r.Root) {
		return strings.TrimSuffix(r.Root, "/"+graphsPrefix+r.Graph+".omni")
	}
	return filepath.Dir(filepath.Dir(r.Root))
}
