package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storeuri"
)

// Layout keys under the storage root (spec/surfaces.md §4).
const (
	stateKey       = "__cluster/state.json"
	lockKey        = "__cluster/lock.json"
	recoveryPrefix = "__cluster/recoveries/"
	approvalPrefix = "__cluster/approvals/"
	resourcePrefix = "__cluster/resources/"
	graphsPrefix   = "graphs/"
)

// Options carry what the cluster commands need from outside: the clock,
// and (for tests) how a storage root is opened.
type Options struct {
	// OpenStore opens the store at a storage root; nil uses local
	// directories and storeuri.Open for scheme URIs.
	OpenStore func(ctx context.Context, root string) (storage.Store, error)
	// GraphOptions are used for every graph handle apply/import/refresh open.
	GraphOptions omnigraph.Options
	// PID is recorded in lock files (0 = none); the CLI passes os.Getpid().
	PID int
}

// isScheme reports whether a cluster source is a storage URI rather than a
// config directory.
func isScheme(s string) bool { return strings.Contains(s, "://") && !strings.HasPrefix(s, "file://") }

// storageRoot resolves the storage root of a config directory: the
// storage key, or the directory itself.
func storageRoot(dir string, c *Config) string {
	if c != nil && c.Storage != "" {
		s := c.Storage
		if !isScheme(s) && !filepath.IsAbs(strings.TrimPrefix(s, "file://")) {
			return filepath.Join(dir, strings.TrimPrefix(s, "file://"))
		}
		return strings.TrimPrefix(s, "file://")
	}
	return dir
}

// GraphURI is the derived root of graph id under a storage root.
func GraphURI(root, id string) string {
	if isScheme(root) {
		return strings.TrimSuffix(root, "/") + "/" + graphsPrefix + id + ".omni"
	}
	return filepath.Join(root, "graphs", id+".omni")
}

func graphPrefix(id string) string { return graphsPrefix + id + ".omni/" }

func (o Options) open(ctx context.Context, root string) (storage.Store, error) {
	if o.OpenStore != nil {
		return o.OpenStore(ctx, root)
	}
	if isScheme(root) {
		return storeuri.Open(root, true)
	}
	st, err := storage.NewLocal(root)
	if err != nil {
		return nil, fmt.Errorf("cluster storage root %s: %w", root, err)
	}
	return st, nil
}
