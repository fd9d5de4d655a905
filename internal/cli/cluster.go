package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/spf13/cobra"
)

func (a *app) newClusterCmd() *cobra.Command {
	cmd := groupCmd("cluster", "Validate, plan and apply a cluster (cluster.yaml)",
		`A cluster is a directory holding cluster.yaml and the schema, query and
policy files it names. validate checks it, import creates the state ledger,
plan previews, apply converges the storage root to it (creating graphs at
<root>/graphs/<id>.omni), status reports what is applied.`)
	type sub struct {
		use, short string
		args       cobra.PositionalArgs
		globals    []string
		run        func(cmd *cobra.Command, dir string, args []string) (any, cluster.Report, func() error, error)
	}
	opts := func() cluster.Options { return cluster.Options{PID: os.Getpid()} }
	subs := []sub{
		{"validate", "Check cluster.yaml and every file it names", cobra.NoArgs, nil,
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				r := cluster.Validate(cmd.Context(), dir)
				return r, r.Report, func() error { return a.printValidate(r) }, nil
			}},
		{"plan", "Preview what apply would change (read-only)", cobra.NoArgs, nil,
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				r := cluster.Plan(cmd.Context(), dir, opts())
				return r, r.Report, func() error { return a.printPlan(r) }, nil
			}},
		{"import", "Create the state ledger from the declared graph roots", cobra.NoArgs, nil,
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				r := cluster.Import(cmd.Context(), dir, opts())
				return r, r.Report, func() error { return a.printObserve(r) }, nil
			}},
		{"refresh", "Update the state ledger from the live graphs and catalog", cobra.NoArgs, nil,
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				r := cluster.Refresh(cmd.Context(), dir, opts())
				return r, r.Report, func() error { return a.printObserve(r) }, nil
			}},
		{"apply", "Converge the cluster to cluster.yaml", cobra.NoArgs, []string{"as"},
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				actor, err := a.actor()
				if err != nil {
					return nil, cluster.Report{}, nil, err
				}
				r := cluster.Apply(cmd.Context(), dir, actor, opts())
				return r, r.Report, func() error { return a.printApply(r) }, nil
			}},
		{"status", "Report the applied state, the lock and catalog integrity", cobra.NoArgs, nil,
			func(cmd *cobra.Command, dir string, _ []string) (any, cluster.Report, func() error, error) {
				r := cluster.Status(cmd.Context(), dir, opts())
				return r, r.Report, func() error { return a.printStatus(r) }, nil
			}},
		{"approve RESOURCE", "Approve a gated change (a graph delete: graph.<id>)", cobra.ExactArgs(1), []string{"as"},
			func(cmd *cobra.Command, dir string, args []string) (any, cluster.Report, func() error, error) {
				actor, err := a.actor()
				if err != nil {
					return nil, cluster.Report{}, nil, err
				}
				r := cluster.Approve(cmd.Context(), dir, args[0], actor, opts())
				return r, r.Report, func() error {
					if r.Approval != nil {
						fmt.Fprintf(a.io.Out, "approved %s as %s (approval %s)\n", r.Approval.Resource, r.Approval.Actor, r.Approval.ApprovalID)
					}
					return a.printDiagnostics(r.Report)
				}, nil
			}},
		{"force-unlock LOCK_ID", "Remove a held state lock by its exact id", cobra.ExactArgs(1), nil,
			func(cmd *cobra.Command, dir string, args []string) (any, cluster.Report, func() error, error) {
				r := cluster.ForceUnlock(cmd.Context(), dir, args[0], opts())
				return r, r.Report, func() error {
					if r.Removed {
						fmt.Fprintf(a.io.Out, "removed lock %s\n", r.LockID)
					}
					return a.printDiagnostics(r.Report)
				}, nil
			}},
	}
	for _, s := range subs {
		s := s
		var config string
		var asJSON bool
		c := &cobra.Command{
			Use:   s.use,
			Short: s.short,
			Args:  s.args,
			RunE: a.run(func(cmd *cobra.Command, args []string) error {
				v, rep, human, err := s.run(cmd, config, args)
				if err != nil {
					return err
				}
				if asJSON {
					if err := a.printJSON(v); err != nil {
						return err
					}
				} else if err := human(); err != nil {
					return err
				}
				if !rep.OK {
					return &SilentError{Err: errReported}
				}
				return nil
			}),
		}
		acceptGlobals(c, append([]string{"quiet"}, s.globals...)...)
		c.Flags().StringVar(&config, "config", ".", "cluster config directory (holds cluster.yaml)")
		c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
		cmd.AddCommand(c)
	}
	return cmd
}

func (a *app) printDiagnostics(r cluster.Report) error {
	for _, d := range r.Diagnostics {
		fmt.Fprintln(a.io.Err, d.String())
	}
	return nil
}

func (a *app) printValidate(r *cluster.ValidateReport) error {
	if r.OK {
		fmt.Fprintf(a.io.Out, "cluster valid: %s (%d graphs, %d resources)\n", r.Config, len(r.Graphs), len(r.Resources))
	}
	return a.printDiagnostics(r.Report)
}

func changeLine(c cluster.Change) string {
	sign := map[string]string{cluster.ActionCreate: "+", cluster.ActionUpdate: "~", cluster.ActionDelete: "-"}[c.Action]
	s := fmt.Sprintf("  %s %s %s [%s", sign, c.Action, c.Resource, c.Disposition)
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	s += "]"
	if c.BindingChange {
		s += " [bindings]"
	}
	if c.Adopt {
		s += " (adopts the existing graph)"
	}
	return s
}

func (a *app) printPlan(r *cluster.PlanReport) error {
	if r.OK {
		rev := fmt.Sprintf("state revision %d", r.StateRevision)
		if !r.StatePresent {
			rev = "no state yet"
		}
		fmt.Fprintf(a.io.Out, "plan for %s (%s)\n", r.Config, rev)
		for _, c := range r.Changes {
			fmt.Fprintln(a.io.Out, changeLine(c))
		}
		if len(r.Changes) == 0 {
			fmt.Fprintln(a.io.Out, "  no changes: the cluster matches its config")
		}
		if len(r.ApprovalsRequired) > 0 {
			fmt.Fprintf(a.io.Out, "approvals required: %s (omnigraph cluster approve RESOURCE --as ACTOR)\n", strings.Join(r.ApprovalsRequired, ", "))
		}
	}
	return a.printDiagnostics(r.Report)
}

func (a *app) printApply(r *cluster.ApplyReport) error {
	for _, c := range r.Changes {
		fmt.Fprintln(a.io.Out, changeLine(c))
	}
	switch {
	case !r.OK:
	case r.StateWritten:
		fmt.Fprintf(a.io.Out, "applied: state revision %d, converged: %v\n", r.StateRevision, r.Converged)
	default:
		fmt.Fprintf(a.io.Out, "nothing to apply: state revision %d, converged: %v\n", r.StateRevision, r.Converged)
	}
	return a.printDiagnostics(r.Report)
}

func (a *app) printObserve(r *cluster.ObserveReport) error {
	for addr, o := range r.Observations {
		state := "missing"
		switch {
		case o.Error != "":
			state = "error: " + o.Error
		case o.Exists && o.SchemaMatches:
			state = "exists, schema matches"
		case o.Exists:
			state = "exists, schema differs"
		}
		fmt.Fprintf(a.io.Out, "  %s: %s\n", addr, state)
	}
	if r.StateWritten {
		fmt.Fprintf(a.io.Out, "%s: state revision %d\n", r.Command, r.StateRevision)
	}
	return a.printDiagnostics(r.Report)
}

func (a *app) printStatus(r *cluster.StatusReport) error {
	if r.StatePresent {
		fmt.Fprintf(a.io.Out, "state revision %d, %d resources applied\n", r.StateRevision, len(r.Resources))
		for _, addr := range sortedMapKeys(r.Resources) {
			st := r.ResourceStatuses[addr].Status
			if st == "" {
				st = "applied"
			}
			fmt.Fprintf(a.io.Out, "  %s %s\n", addr, st)
		}
	}
	if r.Lock != nil {
		fmt.Fprintf(a.io.Out, "locked by %s (lock %s, pid %d, %ds old)\n", r.Lock.LockOperation, r.Lock.LockID, r.Lock.LockPID, r.Lock.LockAgeSecs)
	}
	return a.printDiagnostics(r.Report)
}
