// Package servertest holds what the tests of the serving surfaces (the
// HTTP server, MCP, the web console, omnigraph-server) set up alike.
package servertest

import (
	"context"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// SocialGraph creates the social fixture graph at uri (fixture.SocialSchema)
// and loads fixture.SocialData into main in one overwrite, both by actor;
// either failing fails t.
func SocialGraph(t testing.TB, uri, actor string) *omnigraph.Graph {
	t.Helper()
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, uri, "schema.pg", fixture.SocialSchema, actor, omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(fixture.SocialData), omnigraph.LoadOptions{Mode: omnigraph.Overwrite, Actor: actor}); err != nil {
		t.Fatal(err)
	}
	return g
}
