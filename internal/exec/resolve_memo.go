package exec

import "github.com/omnigraph-go/omnigraph/internal/commit"

// resolvedHead is what resolving a branch head derived from its commit:
// the compiled schema (its commit checked against the schema's table
// prefixes) and the commit as callers see it. A warm read whose head has
// not moved gets the same *commit.Commit from the commit cache, and then
// reuses all of it instead of looking the schema up, checking the commit
// and rendering its ids again on every query. Everything here is derived
// from immutable objects, so it can only be out of date by naming another
// commit, which the pointer comparison rules out; it holds no table data
// (a snapshot's images stay owned by the cache budget).
type resolvedHead struct {
	c      *commit.Commit
	sc     *compiledSchema
	branch string
	info   CommitInfo
}

// resolvedFor returns the memo of branch if it is for commit c.
func (g *Graph) resolvedFor(branch string, c *commit.Commit) (*resolvedHead, bool) {
	v, ok := g.resolved.Load(branch)
	if !ok {
		return nil, false
	}
	m := v.(*resolvedHead)
	return m, m.c == c
}

// remember records what resolving branch to c derived. branch is "" for
// a pinned commit, which is not memoized (a time-travel read need not
// come back).
func (g *Graph) remember(branch string, c *commit.Commit, sc *compiledSchema) {
	if branch == "" {
		return
	}
	g.resolved.Store(branch, &resolvedHead{c: c, sc: sc, branch: branch, info: commitInfo(c, branch)})
}
