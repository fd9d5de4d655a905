package cluster

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storeuri"
)

// TestLifecycleOnS3 runs a cluster whose storage root is an s3:// URI: the
// ledger, the lock, the catalog and the graphs all live in the bucket, and a
// server-side load of the applied state needs only the URI.
func TestLifecycleOnS3(t *testing.T) {
	base := os.Getenv("OMNIGRAPH_TEST_S3")
	if base == "" {
		t.Skip("no S3 server: set OMNIGRAPH_TEST_S3 and AWS_* (scripts/test.sh starts VersityGW)")
	}
	ctx := t.Context()
	root := fmt.Sprintf("%s/clusters/lifecycle-%d-%d", base, os.Getpid(), time.Now().UnixNano())
	dir := writeCluster(t, map[string]string{"cluster.yaml": "storage: " + root + "\n" + withScratch})
	mustOK(t, Import(ctx, dir, Options{}).Report)
	a := Apply(ctx, dir, "op", Options{})
	mustOK(t, a.Report)
	if !a.Converged {
		t.Fatalf("apply: %+v", a)
	}
	if _, err := os.Stat(dir + "/__cluster"); !os.IsNotExist(err) {
		t.Fatal("an s3 cluster wrote its ledger into the config directory")
	}
	app, err := LoadApplied(ctx, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := app.Graph("knowledge"); g == nil || g.URI != root+"/graphs/knowledge.omni" || len(g.Queries) != 2 || g.Policy == nil {
		t.Fatalf("applied graph %+v", g)
	}
	if _, err := omnigraph.Open(ctx, root+"/graphs/knowledge.omni", omnigraph.Options{}); err != nil {
		t.Fatal(err)
	}
	if p := Plan(ctx, dir, Options{}); len(p.Changes) != 0 || !p.LockAcquired {
		t.Fatalf("plan: %s", changeSummary(p.Changes))
	}

	// An approved delete removes the graph's objects from the bucket.
	writeFile(t, dir, "cluster.yaml", "storage: "+root+"\n"+testClusterYAML)
	mustOK(t, Approve(ctx, dir, "graph.scratch", "op", Options{}).Report)
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)
	st, err := storeuri.Open(root, true)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.List(ctx, graphPrefix("scratch"), "", func(storage.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d objects left under the deleted graph", n)
	}
}
