package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Approval is __cluster/approvals/<id>.json: a recorded human decision to
// execute one gated change (a graph delete). It is bound to the desired
// config digest and to the digest of the resource's applied subtree, so any
// drift after approving makes it stale; it is consumed by the apply that
// executes the change and is never deleted.
type Approval struct {
	Version      int    `json:"version"`
	ApprovalID   string `json:"approval_id"`
	Resource     string `json:"resource"`
	Actor        string `json:"actor"`
	ConfigDigest string `json:"config_digest"`
	StateDigest  string `json:"state_digest"`
	CreatedAt    int64  `json:"created_at"`
	ConsumedAt   int64  `json:"consumed_at,omitempty"`
}

func (a *Approval) key() string { return approvalPrefix + a.ApprovalID + ".json" }

// subtreeDigest digests the applied entries of a graph's subtree.
func subtreeDigest(s *State, id string) string {
	sub := map[string]ResourceState{}
	for addr, r := range s.AppliedRevision.Resources {
		if g, ok := resourceGraph(addr); ok && g == id {
			sub[addr] = r
		}
	}
	return digestJSON(sub)
}

func listApprovals(ctx context.Context, st storage.Store) ([]*Approval, error) {
	var out []*Approval
	err := st.List(ctx, approvalPrefix, "", func(info storage.Info) error {
		raw, _, err := st.Get(ctx, info.Key)
		if err != nil {
			return err
		}
		var a Approval
		if err := json.Unmarshal(raw, &a); err != nil || a.ApprovalID == "" {
			return fmt.Errorf("%s is not a valid approval", info.Key)
		}
		out = append(out, &a)
		return nil
	})
	return out, err
}

// validApprovals returns the unconsumed, current approval of each resource;
// stale ones are reported as warnings.
func validApprovals(ctx context.Context, st storage.Store, d *Desired, l *ledger, diags *[]Diagnostic) map[string]*Approval {
	out := map[string]*Approval{}
	as, err := listApprovals(ctx, st)
	if err != nil {
		*diags = append(*diags, errorf(CodeStorage, "", "list approvals: %v", err))
		return out
	}
	cfg := d.ConfigDigest()
	for _, a := range as {
		if a.ConsumedAt != 0 {
			continue
		}
		id := strings.TrimPrefix(a.Resource, "graph.")
		if a.ConfigDigest != cfg || a.StateDigest != subtreeDigest(l.state, id) {
			*diags = append(*diags, warnf(CodeApprovalStale, a.Resource, "approval %s by %s no longer matches the config or state it approved; approve again", a.ApprovalID, a.Actor))
			continue
		}
		out[a.Resource] = a
	}
	return out
}

func newApproval(resource, actor, cfg, stateDigest string) *Approval {
	return &Approval{Version: 1, ApprovalID: ulid.Make().String(), Resource: resource, Actor: actor,
		ConfigDigest: cfg, StateDigest: stateDigest, CreatedAt: time.Now().UnixMicro()}
}
