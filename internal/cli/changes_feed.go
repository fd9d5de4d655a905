package cli

import (
	"bufio"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/omnigraph-go/omnigraph"
)

// `omnigraph changes poll|baseline`: the change feed of a branch
// (spec/surfaces.md §1.3, docs/change-feed.md).
func (a *app) newChangesCmd() *cobra.Command {
	return groupCmd("changes", "Follow a branch's changes: baseline, then poll with a cursor", "",
		a.newChangesPollCmd(), a.newChangesBaselineCmd())
}

type feedOptions struct {
	changesOptions
	branch     string
	cursor     string
	start      string
	maxCommits int
	out        string
}

func (a *app) feedFlags(cmd *cobra.Command, o *feedOptions, poll bool) {
	f := cmd.Flags()
	f.StringVar(&o.uri, "uri", "", "graph URI")
	f.StringVar(&o.branch, "branch", "main", "branch to follow")
	o.register(cmd, "only this type (repeatable)")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	if poll {
		f.StringVar(&o.cursor, "cursor", "", "resume after this cursor (from a previous poll or a baseline)")
		f.StringVar(&o.start, "start", "", "where to start without a cursor: now, beginning or after:<commit>")
		f.StringVar(&o.pageToken, "page-token", "", "continue a block a previous poll ended inside")
		f.IntVar(&o.limit, "limit", omnigraph.DefaultPageChanges, "changes per page")
		f.IntVar(&o.maxCommits, "max-commits", 0, "commits per poll (0 = no bound)")
	} else {
		f.StringVar(&o.out, "out", "", "file to write the baseline NDJSON to (required)")
		_ = cmd.MarkFlagRequired("out")
	}
}

func (a *app) newChangesPollCmd() *cobra.Command {
	var o feedOptions
	cmd := &cobra.Command{
		Use:   "poll [URI]",
		Short: "Print the changes of a branch after a cursor, commit by commit",
		Long: `Print the commits of a branch after --cursor (or from --start), oldest
first, each as one block of changes, then the cursor to resume from. Store
the printed cursor after processing a poll: resuming from it shows every
later commit exactly once. Pages end at --limit changes; a page ending
inside a commit prints a --page-token instead of a cursor.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			set := 0
			for _, v := range []string{o.cursor, o.start, o.pageToken} {
				if v != "" {
					set++
				}
			}
			if set > 1 {
				return usagef("--cursor, --start and --page-token are mutually exclusive")
			}
			g, _, err := a.open(cmd, args, o.uri)
			if err != nil {
				return err
			}
			page, err := g.PollChanges(cmd.Context(), omnigraph.FeedRequest{Branch: o.branch, Cursor: o.cursor, PageToken: o.pageToken,
				Start: o.start, Scope: o.scope(), MaxChanges: o.limit, MaxCommits: o.maxCommits})
			if err != nil {
				return err
			}
			if o.json {
				return a.printJSON(toFeedJSON(page))
			}
			for _, b := range page.Blocks {
				branch := b.Cause.AuthoredBranch
				if branch == "" {
					branch = "main"
				}
				fmt.Fprintf(a.io.Out, "commit %s on %s (%d changes)\n", b.Cause.Commit, branch, len(b.Changes))
				writeChanges(a.io.Out, b.Changes)
			}
			if page.PageToken != "" {
				fmt.Fprintf(a.io.Out, "next page: --page-token %s\n", page.PageToken)
				return nil
			}
			state := "more commits follow"
			if page.CaughtUp {
				state = "caught up"
			}
			fmt.Fprintf(a.io.Out, "cursor: %s (%s)\n", page.Cursor, state)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	a.feedFlags(cmd, &o, true)
	return cmd
}

type feedJSON struct {
	Blocks []struct {
		Cause   causeJSON    `json:"cause"`
		Changes []changeJSON `json:"changes"`
	} `json:"blocks"`
	NextPageToken *string `json:"next_page_token,omitempty"`
	Cursor        *string `json:"cursor,omitempty"`
	CaughtUp      *bool   `json:"caught_up,omitempty"`
}

func toFeedJSON(p *omnigraph.FeedPage) feedJSON {
	var out feedJSON
	out.Blocks = make([]struct {
		Cause   causeJSON    `json:"cause"`
		Changes []changeJSON `json:"changes"`
	}, len(p.Blocks))
	for i, b := range p.Blocks {
		out.Blocks[i].Cause = toCauseJSON(b.Cause)
		out.Blocks[i].Changes = toChangesJSON(b.Changes)
	}
	if p.PageToken != "" {
		out.NextPageToken = &p.PageToken
	} else {
		out.Cursor = &p.Cursor
		caught := p.CaughtUp
		out.CaughtUp = &caught
	}
	return out
}

func (a *app) newChangesBaselineCmd() *cobra.Command {
	var o feedOptions
	cmd := &cobra.Command{
		Use:   "baseline [URI] --out PATH",
		Short: "Write a branch's current state as NDJSON and print the cursor that follows it",
		Long: `Export the branch at its current head to --out (the load format), then
print {snapshot_commit_id, resume_cursor}: polling from resume_cursor shows
exactly the commits after the exported state.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			o.limit = 1
			if err := o.check(); err != nil {
				return err
			}
			g, _, err := a.open(cmd, args, o.uri)
			if err != nil {
				return err
			}
			f, err := os.Create(o.out)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(f)
			b, err := g.CaptureBaseline(cmd.Context(), o.branch, o.scope(), w)
			if err == nil {
				err = w.Flush()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = os.Remove(o.out)
				return err
			}
			if o.json {
				return a.printJSON(map[string]string{"snapshot_commit_id": b.SnapshotCommit, "resume_cursor": b.ResumeCursor})
			}
			fmt.Fprintf(a.io.Out, "baseline of %s at commit %s written to %s\nresume cursor: %s\n", o.branch, b.SnapshotCommit, o.out, b.ResumeCursor)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	a.feedFlags(cmd, &o, false)
	return cmd
}
