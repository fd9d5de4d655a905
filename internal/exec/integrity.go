package exec

import (
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TableStatePrefixes maps every table of a catalog to the key prefix of its
// state objects: the exact table map a commit of that schema must hold
// (commit.CheckTables; docs/format/commit.md §3).
func TableStatePrefixes(cat *schema.Catalog) map[string]string {
	keys := snapshot.TableKeys(cat)
	out := make(map[string]string, len(keys))
	for _, tk := range keys {
		out[tk] = snapshot.TablePrefix(tk) + "/state/"
	}
	return out
}
