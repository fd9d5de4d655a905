package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	uri string
	scopeOptions
	stat bool
	json bool
}

func (a *app) newDiffCmd() *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff FROM TO [URI]",
		Short: "Show the entities and properties that differ between two branches or commits",
		Long: `Show what turns FROM into TO: every node and edge inserted, updated or
deleted, with the properties each update changed (old → new). FROM and TO
are revisions: branch names (their heads), commit ids or unique prefixes of
them, and first-parent steps (main~2, main^). They may be on different
branches; the diff compares the two states, whatever lies between them.

Text output, one line a change (edges by their endpoints, not their
generated ids):

  insert node:Person Eve {age: 22, name: "Eve"}
  update node:Person Bob: age 25 → 99
  delete edge:Knows Bob -> Diana

--stat prints counts per type instead. --type T (or node:T) and --kind node|edge pick
the tables to compare (repeatable; the others are not read), --op
insert|update|delete the changes shown. Only tables whose content differs
between the two commits are read, and of those only the fragments that
differ, so the cost follows the size of the difference.

--json prints {from, to, stats, changes}: from and to are {revision,
commit}; stats {inserts, updates, deletes, types:[{kind, type, inserts,
updates, deletes}]}; changes (left out with --stat) are the change objects
of 'commit changes --json' plus changed_properties on updates.

diff reads the graph directly (a URI, --uri, --store or the configured
default store); the server has no diff route.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runDiff(cmd, args[0], args[1], args[2:], &o)
		}),
	}
	acceptGlobals(cmd, "store", "profile", "graph", "quiet")
	f := cmd.Flags()
	f.StringVar(&o.uri, "uri", "", "graph URI")
	o.register(cmd, "only this node or edge type (repeatable)")
	f.BoolVar(&o.stat, "stat", false, "print counts of inserted, updated and deleted entities per type")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) runDiff(cmd *cobra.Command, from, to string, positional []string, o *diffOptions) error {
	co := changesOptions{limit: 1, scopeOptions: scopeOptions{kinds: o.kinds, ops: o.ops}}
	if err := co.check(); err != nil {
		return err
	}
	types := make([]string, len(o.types))
	for i, t := range o.types {
		types[i] = splitTypeKey(t)
	}
	g, _, err := a.open(cmd, positional, o.uri)
	if err != nil {
		return err
	}
	cs, err := g.DiffBetween(cmd.Context(), omnigraph.Target{Snapshot: from}, omnigraph.Target{Snapshot: to},
		omnigraph.ChangeScope{Kinds: o.kinds, Types: types, Ops: o.ops})
	if err != nil {
		return err
	}
	if o.json {
		return a.printJSON(diffJSONOf(from, to, cs, o.stat))
	}
	fmt.Fprintf(a.io.Out, "diff %s (%s) → %s (%s)\n", from, cs.From.ID, to, cs.To.ID)
	if o.stat {
		writeDiffStat(a.io.Out, cs)
		return nil
	}
	if len(cs.Changes) == 0 {
		fmt.Fprintln(a.io.Out, "(no changes)")
		return nil
	}
	writeChanges(a.io.Out, cs.Changes)
	fmt.Fprintln(a.io.Out, statLine(cs.Stats))
	return nil
}

// statLine is the one-line summary under a diff.
func statLine(s omnigraph.ChangeStats) string {
	return fmt.Sprintf("%s: %d inserted, %d updated, %d deleted", plural(s.Inserts+s.Updates+s.Deletes, "change"), s.Inserts, s.Updates, s.Deletes)
}

// typeStat counts one type's changes.
type typeStat struct {
	Kind    string `json:"kind"`
	Type    string `json:"type"`
	Inserts int    `json:"inserts"`
	Updates int    `json:"updates"`
	Deletes int    `json:"deletes"`
}

// typeStats counts changes per type, in the changes' order.
func typeStats(chs []omnigraph.Change) []typeStat {
	var out []typeStat
	for _, c := range chs {
		if n := len(out); n == 0 || out[n-1].Kind != c.Kind || out[n-1].Type != c.Type {
			out = append(out, typeStat{Kind: c.Kind, Type: c.Type})
		}
		s := &out[len(out)-1]
		switch c.Op {
		case "insert":
			s.Inserts++
		case "update":
			s.Updates++
		case "delete":
			s.Deletes++
		}
	}
	return out
}

func writeDiffStat(w io.Writer, cs *omnigraph.ChangeSet) {
	stats := typeStats(cs.Changes)
	if len(stats) == 0 {
		fmt.Fprintln(w, "(no changes)")
		return
	}
	rows := [][]string{{"type", "inserted", "updated", "deleted"}}
	for _, s := range stats {
		rows = append(rows, []string{s.Kind + ":" + s.Type, fmt.Sprint(s.Inserts), fmt.Sprint(s.Updates), fmt.Sprint(s.Deletes)})
	}
	rows = append(rows, []string{"total", fmt.Sprint(cs.Stats.Inserts), fmt.Sprint(cs.Stats.Updates), fmt.Sprint(cs.Stats.Deletes)})
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %8s  %8s  %8s\n", width, r[0], r[1], r[2], r[3])
	}
}

type diffSideJSON struct {
	Revision string      `json:"revision"`
	Commit   *commitJSON `json:"commit"`
}

type diffChangeJSON struct {
	changeJSON
	ChangedProperties []string `json:"changed_properties,omitempty"`
}

type diffStatsJSON struct {
	Inserts int        `json:"inserts"`
	Updates int        `json:"updates"`
	Deletes int        `json:"deletes"`
	Types   []typeStat `json:"types"`
}

type diffJSON struct {
	From    diffSideJSON      `json:"from"`
	To      diffSideJSON      `json:"to"`
	Stats   diffStatsJSON     `json:"stats"`
	Changes *[]diffChangeJSON `json:"changes,omitempty"`
}

func diffJSONOf(from, to string, cs *omnigraph.ChangeSet, statOnly bool) diffJSON {
	types := typeStats(cs.Changes)
	if types == nil {
		types = []typeStat{}
	}
	out := diffJSON{
		From:  diffSideJSON{from, toCommitJSON(&cs.From)},
		To:    diffSideJSON{to, toCommitJSON(&cs.To)},
		Stats: diffStatsJSON{cs.Stats.Inserts, cs.Stats.Updates, cs.Stats.Deletes, types},
	}
	if !statOnly {
		chs := make([]diffChangeJSON, len(cs.Changes))
		for i, c := range cs.Changes {
			chs[i] = diffChangeJSON{toChangeJSON(c), c.ChangedProperties()}
		}
		out.Changes = &chs
	}
	return out
}

// splitTypeKey accepts a type key as --stat prints it ("node:T",
// "edge:T") as well as a bare type name.
func splitTypeKey(s string) string {
	if k, n, ok := strings.Cut(s, ":"); ok && (k == "node" || k == "edge") {
		return n
	}
	return s
}
