package omnigraph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/exec"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// BlobCell selects one Blob property of one node or edge.
type BlobCell struct {
	// Edge selects an edge type; otherwise a node type.
	Edge     bool
	Type     string
	ID       string
	Property string
}

// Blob is one Blob value: managed bytes, or the URI of an external object
// (Data nil), read at Commit.
type Blob struct {
	Data   []byte
	URI    string
	Commit CommitInfo
}

// ETag is the strong entity tag of a managed blob's bytes (quoted, as in
// an HTTP ETag header; "" for an external blob). The server's /blob route
// and `omnigraph blob stat` report the same tag.
func (b *Blob) ETag() string {
	if b.Data == nil {
		return ""
	}
	sum := sha256.Sum256(b.Data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// Errors of ReadBlob, matched with errors.Is.
var (
	// ErrBlobSelector: the type or property does not exist, or the
	// property is not a Blob.
	ErrBlobSelector = errors.New("invalid blob selector")
	// ErrBlobNotFound: no entity has the id, or its Blob is null.
	ErrBlobNotFound = errors.New("blob not found")
)

// ReadBlob reads one Blob cell at a target.
func (g *Graph) ReadBlob(ctx context.Context, t Target, cell BlobCell) (*Blob, error) {
	snap, err := g.eng.Resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	cat := snap.Catalog()
	kind := "node"
	var props []*schema.Property
	if cell.Edge {
		kind = "edge"
		et, ok := cat.Edge(cell.Type)
		if !ok {
			return nil, fmt.Errorf("%w: unknown edge type '%s'", ErrBlobSelector, cell.Type)
		}
		props = et.Props
	} else {
		nt, ok := cat.Node(cell.Type)
		if !ok {
			return nil, fmt.Errorf("%w: unknown node type '%s'", ErrBlobSelector, cell.Type)
		}
		props = nt.Props
	}
	i := slices.IndexFunc(props, func(p *schema.Property) bool { return p.Name == cell.Property })
	if i < 0 {
		return nil, fmt.Errorf("%w: %s type '%s' has no property '%s'", ErrBlobSelector, kind, cell.Type, cell.Property)
	}
	if props[i].Type.Kind != schema.KindBlob {
		return nil, fmt.Errorf("%w: property '%s' of %s type '%s' is %s, not Blob", ErrBlobSelector, cell.Property, kind, cell.Type, props[i].Type)
	}
	var v any
	found := false
	if cell.Edge {
		tab, err := snap.Edges(ctx, cell.Type)
		if err != nil {
			return nil, err
		}
		for row, id := range tab.IDs {
			if id == cell.ID && tab.Alive(row) {
				found, v = true, tab.Value(row, cell.Property)
				break
			}
		}
	} else {
		tab, err := snap.Nodes(ctx, cell.Type)
		if err != nil {
			return nil, err
		}
		if row, ok := tab.Row(cell.ID); ok {
			found, v = true, tab.Value(row, cell.Property)
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: no %s '%s' of type '%s'", ErrBlobNotFound, kind, cell.ID, cell.Type)
	}
	out := &Blob{Commit: exec.CommitOf(snap)}
	switch b := v.(type) {
	case value.Blob:
		out.Data, out.URI = b.Data, b.URI
		if out.Data == nil && out.URI == "" {
			out.Data = []byte{}
		}
	case []byte:
		out.Data = b
	case nil:
		return nil, fmt.Errorf("%w: %s '%s' has no %s", ErrBlobNotFound, kind, cell.ID, cell.Property)
	default:
		return nil, fmt.Errorf("blob %s.%s of '%s': unexpected value %T", cell.Type, cell.Property, cell.ID, v)
	}
	return out, nil
}
