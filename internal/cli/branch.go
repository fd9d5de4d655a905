package cli

import (
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

func (a *app) newBranchCmd() *cobra.Command {
	return groupCmd("branch", "Create, list, delete and merge branches",
		`A branch is a named pointer to a commit. Creating one copies no data and
costs one small write, whatever the size of the graph; deleting one removes
only the pointer, so branches created from it are unaffected.`,
		a.newBranchCreateCmd(), a.newBranchListCmd(), a.newBranchDeleteCmd(), a.newBranchMergeCmd())
}

func (a *app) newBranchCreateCmd() *cobra.Command {
	var uriFlag, from string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME [--from BRANCH|COMMIT]",
		Short: "Create a branch at the head of another branch (default main) or at a commit",
		Args:  cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, uri, err := a.open(cmd, nil, uriFlag)
			if err != nil {
				return err
			}
			a.echoTarget("branch create", uri)
			if err := g.CreateBranch(cmd.Context(), args[0], from, a.g.as); err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					URI     string  `json:"uri"`
					From    string  `json:"from"`
					Name    string  `json:"name"`
					ActorID *string `json:"actor_id"`
				}{uri, from, args[0], strPtr(a.g.as)})
			}
			fmt.Fprintf(a.io.Out, "created branch %s from %s\n", args[0], from)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet")
	cmd.Flags().StringVar(&uriFlag, "uri", "", "graph URI")
	cmd.Flags().StringVar(&from, "from", "main", "branch or commit id to start from")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) newBranchListCmd() *cobra.Command {
	var uriFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List branches, sorted",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, _, err := a.open(cmd, nil, uriFlag)
			if err != nil {
				return err
			}
			names, err := g.Branches(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					Branches []string `json:"branches"`
				}{names})
			}
			for _, n := range names {
				fmt.Fprintln(a.io.Out, n)
			}
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "quiet")
	cmd.Flags().StringVar(&uriFlag, "uri", "", "graph URI")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) newBranchDeleteCmd() *cobra.Command {
	var uriFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a branch (never main)",
		Args:  cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			uri, err := a.graphURI(nil, uriFlag)
			if err != nil {
				return err
			}
			if err := a.consent(uri, "branch delete", asJSON); err != nil {
				return err
			}
			g, err := a.openGraph(cmd.Context(), uri)
			if err != nil {
				return err
			}
			a.echoTarget("branch delete", uri)
			if err := g.DeleteBranch(cmd.Context(), args[0], a.g.as); err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					URI     string  `json:"uri"`
					Name    string  `json:"name"`
					ActorID *string `json:"actor_id"`
				}{uri, args[0], strPtr(a.g.as)})
			}
			fmt.Fprintf(a.io.Out, "deleted branch %s\n", args[0])
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet", "yes")
	cmd.Flags().StringVar(&uriFlag, "uri", "", "graph URI")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) newBranchMergeCmd() *cobra.Command {
	var uriFlag, into string
	var asJSON, deleteBranch bool
	cmd := &cobra.Command{
		Use:   "merge SOURCE [--into TARGET]",
		Short: "Merge a branch into another (default main)",
		Long: `Merge SOURCE into TARGET (default main) with an entity-level three-way merge
from their merge base.

Outcomes: already_up_to_date (nothing to do), fast_forward (TARGET simply
moves to SOURCE's head), merged (a merge commit with both parents). If the two
sides conflict — both changed the same entity differently, one deleted what
the other updated, or the combination breaks a constraint — nothing is written
and every conflict is reported once (exit 1), naming each property the sides
disagree on with its value at the merge base and on each side:

  conflict: divergent update of node:Person 'Bob': source and target changed
  it differently (age: base 25, source 27, target 26)

To go on, make the branches agree (update or delete the entity on one of
them, e.g. with mutate --branch SOURCE) and merge again.`,
		Args: cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			g, uri, err := a.open(cmd, nil, uriFlag)
			if err != nil {
				return err
			}
			a.echoTarget("branch merge", uri)
			res, err := g.Merge(cmd.Context(), args[0], into, a.g.as)
			var mc *omnigraph.MergeConflictsError
			if errors.As(err, &mc) {
				if asJSON {
					type conflictJSON struct {
						EntityKind string  `json:"entity_kind"`
						TypeName   string  `json:"type_name"`
						EntityID   *string `json:"entity_id,omitempty"`
						Kind       string  `json:"kind"`
						Message    string  `json:"message"`
					}
					cs := make([]conflictJSON, len(mc.Conflicts))
					for i, c := range mc.Conflicts {
						cs[i] = conflictJSON{c.EntityKind, c.TypeName, strPtr(c.EntityID), c.Kind, c.Message}
					}
					_ = a.printJSON(struct {
						Error     string         `json:"error"`
						Source    string         `json:"source"`
						Target    string         `json:"target"`
						Conflicts []conflictJSON `json:"merge_conflicts"`
					}{mc.Error(), args[0], into, cs})
					return &SilentError{Err: err}
				}
				msgs := make([]string, len(mc.Conflicts))
				for i, c := range mc.Conflicts {
					msgs[i] = c.Message
				}
				return a.reportMergeConflicts(args[0], into, msgs, err, false)
			}
			if err != nil {
				return err
			}
			out := struct {
				Source            string      `json:"source"`
				Target            string      `json:"target"`
				Outcome           string      `json:"outcome"`
				ActorID           *string     `json:"actor_id"`
				Commit            *commitJSON `json:"commit,omitempty"`
				BranchDeleted     *bool       `json:"branch_deleted,omitempty"`
				BranchDeleteError *string     `json:"branch_delete_error,omitempty"`
			}{Source: args[0], Target: into, Outcome: string(res.Outcome), ActorID: strPtr(a.g.as), Commit: toCommitJSON(res.Commit)}
			if deleteBranch {
				derr := g.DeleteBranch(cmd.Context(), args[0], a.g.as)
				deleted := derr == nil
				out.BranchDeleted = &deleted
				if derr != nil {
					msg := derr.Error()
					out.BranchDeleteError = &msg
					fmt.Fprintf(a.io.Err, "warning: merged, but deleting branch %s failed: %v\n", args[0], derr)
				}
			}
			if asJSON {
				return a.printJSON(out)
			}
			fmt.Fprintf(a.io.Out, "merge %s into %s: %s\n", args[0], into, res.Outcome)
			return nil
		}),
	}
	acceptGlobals(cmd, "store", "as", "quiet")
	cmd.Flags().StringVar(&uriFlag, "uri", "", "graph URI")
	cmd.Flags().StringVar(&into, "into", "main", "branch to merge into")
	cmd.Flags().BoolVar(&deleteBranch, "delete-branch", false, "delete SOURCE after a successful merge")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// reportMergeConflicts prints a refused merge once, on stderr: what was
// refused, every conflict, and the way forward. It returns err as a
// SilentError (exit 1, nothing more printed).
// The hint names `diff` only for an embedded graph (the server has no
// diff route).
func (a *app) reportMergeConflicts(source, target string, messages []string, err error, served bool) error {
	if target == "" {
		target = "main"
	}
	fmt.Fprintf(a.io.Err, "error: merging %s into %s found %s; nothing was written\n", source, target, plural(len(messages), "conflict"))
	for _, m := range messages {
		fmt.Fprintf(a.io.Err, "conflict: %s\n", m)
	}
	fmt.Fprintf(a.io.Err, "hint: make the two branches agree on each entity above: update it (or delete it) on %s, or on %s, to the state you want\n", source, target)
	fmt.Fprintf(a.io.Err, "      (omnigraph mutate … --branch %s), then run 'omnigraph branch merge %s --into %s' again", source, source, target)
	if !served {
		fmt.Fprintf(a.io.Err, "; 'omnigraph diff %s %s' shows how they differ", target, source)
	}
	fmt.Fprintln(a.io.Err)
	return &SilentError{Err: err}
}
