package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnigraph-go/omnigraph/internal/integrity"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storeuri"
)

// `omnigraph verify` and `omnigraph repair` (docs/cli.md, "Verify and
// repair"; internal/integrity).

func (a *app) newVerifyCmd() *cobra.Command {
	var asJSON, deep bool
	cmd := &cobra.Command{
		Use:   "verify [URI] [--deep] [--json]",
		Short: "Check that every object of the graph is present and intact (read-only)",
		Long: `Check, without writing anything, every branch ref, every commit reachable from
one, and every schema, table state, fragment, deletion vector and index those
commits name: present, intact (checksums and content addresses), and
consistent (a commit's tables match its schema, a deletion vector belongs to its
fragment). --deep also decodes every fragment's data. Objects no ref reaches
(leftovers of failed writes and deleted branches, reclaimed by cleanup) are
counted, not reported as problems.

Exit status 0 when no problem is found, 1 when one is (each names the damaged
object and what refers to it). ` + "`omnigraph repair`" + ` restores lost or damaged
branch refs.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			uri, st, err := a.rawStore(args)
			if err != nil {
				return err
			}
			rep, err := integrity.Verify(cmd.Context(), st, integrity.Options{Deep: deep})
			if err != nil {
				return err
			}
			if asJSON {
				if err := a.printJSON(struct {
					URI string `json:"uri"`
					OK  bool   `json:"ok"`
					*integrity.Report
				}{uri, rep.OK(), rep}); err != nil {
					return err
				}
			} else {
				a.printVerify(uri, rep)
			}
			if !rep.OK() {
				return &SilentError{Err: errReported}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&deep, "deep", false, "also decode every fragment's data")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	acceptGlobals(cmd, "store")
	return cmd
}

func (a *app) printVerify(uri string, rep *integrity.Report) {
	c, u := rep.Checked, rep.Unreachable
	mode := ""
	if rep.Deep {
		mode = ", data decoded"
	}
	fmt.Fprintf(a.io.Out, "verified %s: %d refs, %d commits, %d schemas, %d table states, %d fragments, %d deletion vectors, %d indexes%s\n",
		uri, c.Refs, c.Commits, c.Schemas, c.States, c.Fragments, c.DeletionVectors, c.Indexes, mode)
	fmt.Fprintf(a.io.Out, "unreachable (cleanup reclaims them): %d commits, %d schemas, %d table states, %d fragments, %d deletion vectors, %d indexes, %d other\n",
		u.Commits, u.Schemas, u.States, u.Fragments, u.DeletionVectors, u.Indexes, u.Other)
	if rep.Reclaimed > 0 {
		fmt.Fprintf(a.io.Out, "%d commits in history had their data removed by cleanup\n", rep.Reclaimed)
	}
	if rep.Unchecksummed > 0 {
		fmt.Fprintf(a.io.Out, "%d commits and refs predate checksums (verified structurally)\n", rep.Unchecksummed)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(a.io.Out, "%s %s: %s", p.Kind, p.Object, p.Detail)
		if p.Via != "" {
			fmt.Fprintf(a.io.Out, " (named by %s)", p.Via)
		}
		if p.Branch != "" {
			fmt.Fprintf(a.io.Out, " [branch %s]", p.Branch)
		}
		fmt.Fprintln(a.io.Out)
	}
	if rep.OK() {
		fmt.Fprintln(a.io.Out, "no problems found")
		return
	}
	fmt.Fprintf(a.io.Out, "%d problems found; `omnigraph repair` restores lost or damaged branch refs\n", len(rep.Problems))
}

func (a *app) newRepairCmd() *cobra.Command {
	var asJSON, confirm bool
	var branch, at string
	cmd := &cobra.Command{
		Use:   "repair [URI] [--branch NAME [--commit ID]] [--confirm] [--json]",
		Short: "Restore lost or damaged branch refs (preview unless --confirm)",
		Long: `Find branch refs that are damaged (do not decode, or name a commit that cannot
be read), a missing main ref, or the missing ref of the branch named with
--branch, and point each at the newest intact commit authored on that branch:
the newest commit whose schema, tables, states, fragments and deletion vectors
are intact and whose ancestors' commits all read back. Without --confirm it
only reports what it would do. --commit chooses the commit instead.

An intact ref is never moved. A commit of a write that stopped just before
publishing cannot be told apart from a published one; check the commit the
preview names, and pick another with --commit if it is not the one you expect.`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			if at != "" && branch == "" {
				return usagef("--commit needs --branch")
			}
			uri, st, err := a.rawStore(args)
			if err != nil {
				return err
			}
			if confirm {
				a.echoTarget("repair", uri)
			}
			rep, rerr := integrity.Repair(cmd.Context(), st, integrity.RepairOptions{Branch: branch, Commit: at, Confirm: confirm})
			if rep == nil {
				return rerr
			}
			if asJSON {
				if err := a.printJSON(struct {
					URI string `json:"uri"`
					*integrity.RepairReport
				}{uri, rep}); err != nil {
					return err
				}
			} else {
				a.printRepair(rep)
			}
			return rerr
		}),
	}
	cmd.Flags().StringVar(&branch, "branch", "", "repair only this branch (also restores its ref when it is missing)")
	cmd.Flags().StringVar(&at, "commit", "", "restore the ref to this commit instead of the newest intact one")
	cmd.Flags().BoolVar(&confirm, "confirm", false, "write the restored refs (default: preview)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	acceptGlobals(cmd, "store", "quiet", "yes")
	return cmd
}

func (a *app) printRepair(rep *integrity.RepairReport) {
	if len(rep.Refs) == 0 {
		fmt.Fprintln(a.io.Out, "every branch ref is intact; nothing to repair")
		return
	}
	for _, r := range rep.Refs {
		fmt.Fprintf(a.io.Out, "%s: %s (%s)\n", r.Ref, r.State, r.Detail)
		for _, s := range r.Skipped {
			fmt.Fprintf(a.io.Out, "  skipped %s (height %d): not intact", s.Commit, s.Height)
			if len(s.Problems) > 0 {
				fmt.Fprintf(a.io.Out, ": %s %s", s.Problems[0].Kind, s.Problems[0].Object)
			}
			fmt.Fprintln(a.io.Out)
		}
		if r.Restore == nil {
			fmt.Fprintln(a.io.Out, "  no intact commit of this branch exists")
			continue
		}
		verb := "would restore"
		if r.Done {
			verb = "restored"
		}
		c := r.Restore
		fmt.Fprintf(a.io.Out, "  %s %s → %s (height %d, %s, %s, %q)\n", verb, r.Ref, c.Commit, c.Height, c.Kind,
			time.UnixMicro(c.CreatedAt).UTC().Format(time.RFC3339), c.Message)
	}
	if rep.Preview {
		fmt.Fprintln(a.io.Out, "preview only: run again with --confirm to restore")
	}
}

// rawStore opens the store of the graph the arguments name, below the
// engine: verify and repair read objects a damaged graph's engine could
// not open.
func (a *app) rawStore(args []string) (string, storage.Store, error) {
	uri, err := a.graphURI(args, "")
	if err != nil {
		return "", nil, err
	}
	st, err := storeuri.Open(uri, false)
	return uri, st, err
}
