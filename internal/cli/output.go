package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/omnigraph-go/omnigraph"
)

// printJSON is the one JSON exporter: pretty, stable field order, newline.
func (a *app) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	a.printedJSON = true
	_, err = a.io.Out.Write(b)
	return err
}

// commitJSON is the commit object of every --json output (spec/surfaces.md
// Appendix A).
type commitJSON struct {
	GraphCommitID        string  `json:"graph_commit_id"`
	GraphBranch          *string `json:"graph_branch"`
	GraphManifestVersion int64   `json:"graph_manifest_version"`
	ParentCommitID       *string `json:"parent_commit_id"`
	MergedParentCommitID *string `json:"merged_parent_commit_id"`
	ActorID              *string `json:"actor_id"`
	CreatedAt            int64   `json:"created_at"` // Unix microseconds
}

// info is the commit a served command received (the server's
// CommitOutput has this shape), for the text printers.
func (c commitJSON) info() omnigraph.CommitInfo {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return omnigraph.CommitInfo{ID: c.GraphCommitID, Branch: deref(c.GraphBranch), ManifestVersion: c.GraphManifestVersion,
		Parent: deref(c.ParentCommitID), MergedParent: deref(c.MergedParentCommitID), Actor: deref(c.ActorID),
		CreatedAt: time.UnixMicro(c.CreatedAt)}
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toCommitJSON(c *omnigraph.CommitInfo) *commitJSON {
	if c == nil {
		return nil
	}
	return &commitJSON{
		GraphCommitID:        c.ID,
		GraphBranch:          strPtr(c.Branch),
		GraphManifestVersion: c.ManifestVersion,
		ParentCommitID:       strPtr(c.Parent),
		MergedParentCommitID: strPtr(c.MergedParent),
		ActorID:              strPtr(c.Actor),
		CreatedAt:            c.CreatedAt.UnixMicro(),
	}
}

// printChange prints a mutation's text result, local or served: its
// warnings, then one line naming what it affected and its commit, or that
// it changed nothing (commit nil).
func (a *app) printChange(name, branch string, nodes, edges int64, commit *omnigraph.CommitInfo, warnings []string) {
	a.printWarnings(warnings)
	if commit == nil {
		fmt.Fprintf(a.io.Out, "%s: nothing changed (no commit)\n", name)
		return
	}
	fmt.Fprintf(a.io.Out, "%s: %d nodes and %d edges affected on branch %s, commit %s\n",
		name, nodes, edges, branch, commit.ID)
}

// printLoad prints a load's text result, local or served: one summary
// line, then its warnings.
func (a *app) printLoad(uri, branch, mode string, total int64, nodeTypes, edgeTypes int, warnings []string) {
	fmt.Fprintf(a.io.Out, "loaded %s on branch %s with %s: %d entities across %d node types and %d edge types\n",
		uri, branch, mode, total, nodeTypes, edgeTypes)
	a.printWarnings(warnings)
}
