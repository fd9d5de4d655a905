package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// embedder is a handle's embedding client, built once on first use from
// Options.Embedding or the environment, so a graph that never embeds
// needs no provider key and one that does reuses its connections.
type embedder struct {
	cfg  *embed.Config
	once sync.Once
	c    *embed.Client
	err  error
}

// EmbedClient returns the handle's embedding client (built on first use):
// an error wrapping embed.ErrNotConfigured when no provider is set up.
func (g *Graph) EmbedClient() (*embed.Client, error) {
	e := &g.emb
	e.once.Do(func() {
		var cfg embed.Config
		if e.cfg != nil {
			cfg = *e.cfg
		} else if cfg, e.err = embed.FromEnv(os.Getenv); e.err != nil {
			return
		}
		e.c, e.err = embed.New(cfg)
	})
	return e.c, e.err
}

// queryEmbed is eval.Options.Embed: it embeds the String query of
// nearest() with the handle's client, refusing a client of another model
// than the property's recorded @embed(model=…).
func (g *Graph) queryEmbed(ctx context.Context, req eval.EmbedRequest) ([]float32, error) {
	c, err := g.EmbedClient()
	if err != nil {
		return nil, err
	}
	if err := c.CheckModel(req.Type, req.Prop, req.Model); err != nil {
		return nil, err
	}
	return c.EmbedOne(ctx, req.Text, req.Dim)
}

// embedTargets returns the @embed Vector properties of nt.
func embedTargets(nt *schema.NodeType) []*schema.Property {
	var out []*schema.Property
	for _, p := range nt.Props {
		if p.Embed != nil && p.Type.Kind == schema.KindVector {
			out = append(out, p)
		}
	}
	return out
}

// embedSource returns the text an @embed target is computed from, and
// whether the row needs a vector: the target is null and the source a
// non-blank string.
func embedSource(p *schema.Property, values map[string]any) (string, bool) {
	if values[p.Name] != nil {
		return "", false
	}
	s, ok := values[p.Embed.Source].(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", false
	}
	return s, true
}

// fillEmbeddings computes the missing @embed vectors of rows (node type
// nt) in batches and stores them in the rows' Values. Without a configured
// provider a nullable target stays null; a non-nullable one is a
// *ConstraintError naming the row (failed is its index). It returns how
// many vectors it computed.
func (g *Graph) fillEmbeddings(ctx context.Context, nt *schema.NodeType, rows []Row) (filled int, failed int, err error) {
	for _, p := range embedTargets(nt) {
		var idx []int
		var texts []string
		for i, r := range rows {
			if s, ok := embedSource(p, r.Values); ok {
				idx, texts = append(idx, i), append(texts, s)
			}
		}
		if len(idx) == 0 {
			continue
		}
		c, err := g.EmbedClient()
		if errors.Is(err, embed.ErrNotConfigured) && p.Type.Nullable {
			continue
		}
		if err != nil {
			return filled, idx[0], &ConstraintError{Kind: ConstraintRequired, Type: nt.Name, Prop: p.Name, ID: rows[idx[0]].ID,
				Msg: fmt.Sprintf("@embed property '%s' is missing and cannot be computed from '%s': %v", p.Name, p.Embed.Source, err)}
		}
		if err := c.CheckModel(nt.Name, p.Name, p.Embed.Model); err != nil {
			return filled, idx[0], err
		}
		vecs, err := c.Embed(ctx, texts, p.Type.Dim)
		if err != nil {
			return filled, idx[0], fmt.Errorf("exec: @embed %s.%s: %w", nt.Name, p.Name, err)
		}
		for k, i := range idx {
			rows[i].Values[p.Name] = vecs[k]
		}
		filled += len(idx)
	}
	return filled, -1, nil
}

// embedPending reports whether a null non-nullable property is an @embed
// target the write will compute (its source is set): per-row checks let it
// pass, and fillEmbeddings fills it before the row is written.
func embedPending(p *schema.Property, values map[string]any) bool {
	if p.Embed == nil {
		return false
	}
	_, ok := embedSource(p, values)
	return ok
}

// fillDeltaEmbeddings computes the missing @embed vectors of a mutation's
// staged node rows.
func (g *Graph) fillDeltaEmbeddings(ctx context.Context, cat *schema.Catalog, d *Delta) error {
	for name, td := range d.Nodes {
		nt, ok := cat.Node(name)
		if !ok || len(td.Upserts) == 0 {
			continue
		}
		if _, _, err := g.fillEmbeddings(ctx, nt, td.Upserts); err != nil {
			return err
		}
	}
	return nil
}
