package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func nowFunc() time.Time { return time.Now() }

func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// catalogKey is the content address of a query or policy payload; the
// extension is fixed per kind.
func catalogKey(addr, dig string) (string, bool) {
	switch {
	case strings.HasPrefix(addr, "query."):
		rest := strings.TrimPrefix(addr, "query.")
		i := strings.IndexByte(rest, '.')
		if i <= 0 {
			return "", false
		}
		return resourcePrefix + "query/" + rest[:i] + "/" + rest[i+1:] + "/" + dig + ".gq", true
	case strings.HasPrefix(addr, "policy."):
		return resourcePrefix + "policy/" + strings.TrimPrefix(addr, "policy.") + "/" + dig + ".yaml", true
	}
	return "", false
}

// publishPayload writes a content-addressed payload. An existing blob with
// the right content is left alone; one whose content does not match its name
// (tampered) is replaced.
func publishPayload(ctx context.Context, st storage.Store, key string, payload []byte) error {
	_, err := st.PutIfAbsent(ctx, key, payload)
	if errors.Is(err, storage.ErrExists) {
		cur, _, gerr := st.Get(ctx, key)
		if gerr == nil && bytes.Equal(cur, payload) {
			return nil
		}
		_, err = st.Put(ctx, key, payload)
	}
	return err
}

// readPayload reads and verifies a catalog payload.
func readPayload(ctx context.Context, st storage.Store, addr, dig string) ([]byte, error) {
	key, ok := catalogKey(addr, dig)
	if !ok {
		return nil, fmt.Errorf("%s has no catalog payload", addr)
	}
	raw, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if digest(raw) != dig {
		return nil, errPayloadMismatch
	}
	return raw, nil
}

var errPayloadMismatch = errors.New("catalog payload does not match its digest")

type payloadProblem struct {
	addr string
	kind string // missing | mismatch | read
	diag Diagnostic
}

// verifyCatalog re-hashes every query and policy payload the ledger names.
func verifyCatalog(ctx context.Context, st storage.Store, s *State) []payloadProblem {
	var out []payloadProblem
	for _, addr := range sortedKeys(s.AppliedRevision.Resources) {
		res := s.AppliedRevision.Resources[addr]
		key, ok := catalogKey(addr, res.Digest)
		if !ok {
			continue
		}
		_, err := readPayload(ctx, st, addr, res.Digest)
		switch {
		case err == nil:
		case errors.Is(err, storage.ErrNotFound):
			out = append(out, payloadProblem{addr, "missing", warnf(CodePayloadMissing, addr, "%s is missing", key)})
		case errors.Is(err, errPayloadMismatch):
			out = append(out, payloadProblem{addr, "mismatch", warnf(CodePayloadMismatch, addr, "%s does not hash to its digest", key)})
		default:
			out = append(out, payloadProblem{addr, "read", errorf(CodePayloadRead, addr, "read %s: %v", key, err)})
		}
	}
	return out
}
