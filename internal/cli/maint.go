package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

func (a *app) newOptimizeCmd() *cobra.Command {
	var asJSON bool
	var branch string
	cmd := &cobra.Command{
		Use:   "optimize [URI]",
		Short: "Compact small fragments and apply deletions (content-preserving)",
		Long: `Compact each table's small fragments into larger ones, rewrite fragments
with many deleted rows, and build key indexes, publishing one maintenance
commit. Content is unchanged, and concurrent writers never conflict with it.
Running it again on an optimized graph changes nothing and makes no commit.

Writes already compact a table automatically once it has more than a few
small fragments, so optimize is rarely needed; see docs/maintenance.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, uri, err := a.open(cmd, args, "")
			if err != nil {
				return err
			}
			a.echoTarget("optimize", uri)
			res, err := g.Optimize(cmd.Context(), branch)
			if err != nil {
				return err
			}
			if asJSON {
				type ds struct {
					TypeKey          string `json:"type_key"`
					FragmentsRemoved int    `json:"fragments_removed"`
					FragmentsAdded   int    `json:"fragments_added"`
					Committed        bool   `json:"committed"`
					Indexed          int    `json:"fragments_indexed"`
					SearchIndexed    int    `json:"search_indexes_built,omitempty"`
					ScalarIndexed    int    `json:"scalar_indexes_built,omitempty"`
				}
				out := struct {
					URI      string      `json:"uri"`
					Branch   string      `json:"branch"`
					Datasets []ds        `json:"datasets"`
					Commit   *commitJSON `json:"commit"`
				}{URI: uri, Branch: res.Branch, Datasets: []ds{}, Commit: toCommitJSON(res.Commit)}
				for _, d := range res.Datasets {
					out.Datasets = append(out.Datasets, ds{d.TypeKey, d.FragmentsRemoved, d.FragmentsAdded, d.Committed, d.Indexed, d.SearchIndexed, d.ScalarIndexed})
				}
				return a.printJSON(out)
			}
			changed := 0
			for _, d := range res.Datasets {
				if !d.Committed {
					continue
				}
				changed++
				var did []string
				if d.FragmentsRemoved > 0 || d.FragmentsAdded > 0 {
					did = append(did, fmt.Sprintf("%d fragments compacted into %d", d.FragmentsRemoved, d.FragmentsAdded))
				}
				if d.Indexed > 0 {
					did = append(did, fmt.Sprintf("%d fragments indexed", d.Indexed))
				}
				if d.SearchIndexed > 0 {
					did = append(did, fmt.Sprintf("%d search indexes built", d.SearchIndexed))
				}
				if d.ScalarIndexed > 0 {
					did = append(did, fmt.Sprintf("%d scalar indexes built", d.ScalarIndexed))
				}
				if len(did) == 0 {
					did = append(did, "rewritten")
				}
				fmt.Fprintf(a.io.Out, "%s: %s\n", d.TypeKey, strings.Join(did, ", "))
			}
			if res.Commit == nil {
				fmt.Fprintln(a.io.Out, "already optimized: nothing to do")
				return nil
			}
			fmt.Fprintf(a.io.Out, "optimized %d of %d tables, commit %s\n", changed, len(res.Datasets), res.Commit.ID)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	cmd.Flags().StringVar(&branch, "branch", "main", "branch to optimize")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// parseAge parses a cleanup age: a number followed by s, m, h, d or w.
func parseAge(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("invalid duration %q: use a number and a unit s, m, h, d or w (e.g. 7d)", s)
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	n, err := strconv.ParseUint(strings.TrimSpace(s[:len(s)-1]), 10, 32)
	if unit == 0 || err != nil {
		return 0, fmt.Errorf("invalid duration %q: use a number and a unit s, m, h, d or w (e.g. 7d)", s)
	}
	return time.Duration(n) * unit, nil
}

func (a *app) newCleanupCmd() *cobra.Command {
	var asJSON, confirm bool
	var keep int
	var olderThan, grace string
	cmd := &cobra.Command{
		Use:   "cleanup [URI] (--keep N | --older-than DUR) [--grace DUR] [--confirm]",
		Short: "Reclaim space held by old history (preview unless --confirm)",
		Long: `Delete the data of commits no longer retained and every file no retained
commit uses. Retained: each branch's head, the last N commits of every
branch (--keep N), commits younger than DUR (--older-than, units s m h d w,
e.g. 7d), and merge bases between branches. Without --confirm it only
reports what it would delete.

Files younger than the grace period (--grace, default 1h) are never
deleted, and a commit stays readable for the grace period after it stopped
being a branch head, so writers and readers in flight are safe. --grace 0s
turns the protection off: use it only when no other process is using the
graph. Reading a commit whose data was removed fails with a
clear error; every branch head stays readable.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if !f.Changed("keep") && !f.Changed("older-than") {
				return usagef("cleanup needs --keep N and/or --older-than DUR")
			}
			o := omnigraph.CleanupOptions{Confirm: confirm}
			if f.Changed("keep") {
				if keep < 0 {
					return usagef("--keep must be 0 or more")
				}
				// The head of every branch is always kept, so --keep 0
				// means the same as --keep 1.
				o.Keep = max(keep, 1)
			}
			if olderThan != "" {
				d, err := parseAge(olderThan)
				if err != nil {
					return &UsageError{Err: err}
				}
				o.OlderThan = d
			}
			if f.Changed("grace") {
				d, err := parseAge(grace)
				if err != nil {
					return &UsageError{Err: fmt.Errorf("--grace: %w", err)}
				}
				o.Grace = d
				if d == 0 {
					o.Grace = -1 // no grace at all (the engine's 0 is its default)
				}
			}
			uri, err := a.graphURI(args, "")
			if err != nil {
				return err
			}
			if confirm {
				if err := a.consent(uri, "cleanup --confirm", asJSON); err != nil {
					return err
				}
			}
			g, err := a.openGraph(cmd.Context(), uri)
			if err != nil {
				return err
			}
			a.echoTarget("cleanup", uri)
			res, err := g.Cleanup(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					URI              string `json:"uri"`
					Preview          bool   `json:"preview"`
					CommitsRemoved   int    `json:"commits_removed"`
					CommitsReclaimed int    `json:"commits_reclaimed"`
					FilesRemoved     int    `json:"files_removed"`
					BytesRemoved     int64  `json:"bytes_removed"`
					CommitsKept      int    `json:"commits_kept"`
				}{uri, res.Preview, res.CommitsRemoved, res.CommitsReclaimed, res.FilesRemoved, res.BytesFreed, len(res.Kept)})
			}
			verb := "removed"
			if res.Preview {
				verb = "would remove"
			}
			fmt.Fprintf(a.io.Out, "%s %d files (%d bytes); %d commits no longer readable, %d unreachable commits deleted; %d commits kept\n",
				verb, res.FilesRemoved, res.BytesFreed, res.CommitsReclaimed, res.CommitsRemoved, len(res.Kept))
			if res.Preview {
				fmt.Fprintln(a.io.Out, "preview only: run again with --confirm to delete")
			}
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet", "yes")
	f := cmd.Flags()
	f.IntVar(&keep, "keep", 0, "keep the last N commits of every branch")
	f.StringVar(&olderThan, "older-than", "", "keep commits younger than this age (e.g. 12h, 7d, 2w)")
	f.StringVar(&grace, "grace", "1h", "never delete files, or make commits unreadable, younger than this (0s: no protection; only when nothing else uses the graph)")
	f.BoolVar(&confirm, "confirm", false, "actually delete (otherwise preview)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
