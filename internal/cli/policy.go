package cli

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/omnigraph-go/omnigraph/internal/policy"
	"github.com/spf13/cobra"
)

func sortedMapKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// appliedCluster loads the applied revision of --cluster (a directory, a
// storage root, or a name under clusters: in the operator config).
func (a *app) appliedCluster(cmd *cobra.Command) (*cluster.Applied, error) {
	src := a.g.cluster
	if src == "" {
		return nil, usagef("%s reads a cluster's applied policies: give --cluster DIR|URI", cmd.CommandPath())
	}
	if c, err := a.operator(); err == nil {
		if named, ok := c.Clusters[src]; ok && named.Root != "" {
			src = named.Root
		}
	}
	return cluster.LoadApplied(cmd.Context(), src, cluster.Options{PID: os.Getpid()})
}

// policyScope loads the applied cluster and picks the bundles a policy
// command checks: the bundle of --graph (or of the only graph that has
// one) and the cluster bundle.
func (a *app) policyScope(cmd *cobra.Command) (*cluster.Applied, *cluster.AppliedGraph, error) {
	app, err := a.appliedCluster(cmd)
	if err != nil {
		return nil, nil, err
	}
	g, err := a.policyGraph(app)
	return app, g, err
}

// policyGraph is the graph whose bundle policyScope picks (nil: none).
func (a *app) policyGraph(app *cluster.Applied) (*cluster.AppliedGraph, error) {
	if a.g.graph != "" {
		g := app.Graph(a.g.graph)
		if g == nil {
			return nil, fmt.Errorf("graph %q is not applied in this cluster", a.g.graph)
		}
		return g, nil
	}
	var with []*cluster.AppliedGraph
	for _, g := range app.Graphs {
		if g.Policy != nil {
			with = append(with, g)
		}
	}
	if len(with) == 1 {
		return with[0], nil
	}
	if len(with) > 1 {
		names := make([]string, len(with))
		for i, g := range with {
			names[i] = g.ID
		}
		return nil, usagef("several graphs have policies (%v): pick one with --graph", names)
	}
	return nil, nil
}

func bundleFor(g *cluster.AppliedGraph, app *cluster.Applied, action policy.Action) (*policy.Bundle, error) {
	if action.ServerScoped() {
		if app.Server == nil {
			return nil, fmt.Errorf("no policy is bound to the cluster: graph_list is denied")
		}
		return app.Server, nil
	}
	if g == nil {
		return nil, fmt.Errorf("no graph of this cluster has a policy bundle")
	}
	if g.Policy == nil {
		return nil, fmt.Errorf("graph %s has no policy bundle", g.ID)
	}
	return g.Policy, nil
}

func (a *app) newPolicyCmd() *cobra.Command {
	cmd := groupCmd("policy", "Check a cluster's applied Cedar policies",
		`Policy commands read the policy bundles a cluster has applied (--cluster DIR
or a storage root URI; --graph picks the graph when several have bundles).`)
	var asJSON bool
	validate := &cobra.Command{
		Use:   "validate",
		Short: "Check that the applied policy bundles parse and compile",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			app, err := a.appliedCluster(cmd)
			if err != nil {
				return err
			}
			type bundleJSON struct {
				Bundle   string `json:"bundle"`
				Resource string `json:"resource"`
				Kind     string `json:"kind"`
				Actors   int    `json:"actors"`
				Rules    int    `json:"rules"`
				Policies int    `json:"policies"`
			}
			out := []bundleJSON{}
			add := func(b *policy.Bundle) {
				out = append(out, bundleJSON{b.Name(), b.Resource(), b.Kind().String(), len(b.File().Actors()), len(b.File().Rules), b.PolicyCount()})
			}
			for _, g := range app.Graphs {
				if g.Policy != nil && (a.g.graph == "" || a.g.graph == g.ID) {
					add(g.Policy)
				}
			}
			if app.Server != nil && a.g.graph == "" {
				add(app.Server)
			}
			if a.g.graph != "" && app.Graph(a.g.graph) == nil {
				return fmt.Errorf("graph %q is not applied in this cluster", a.g.graph)
			}
			if asJSON {
				return a.printJSON(struct {
					OK      bool         `json:"ok"`
					Bundles []bundleJSON `json:"bundles"`
				}{true, out})
			}
			if len(out) == 0 {
				fmt.Fprintln(a.io.Out, "no policy bundles are applied")
			}
			for _, b := range out {
				fmt.Fprintf(a.io.Out, "policy valid: bundle '%s' [%d actors]\n", b.Bundle, b.Actors)
			}
			return nil
		}),
	}
	validate.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")

	var testsFile string
	var testJSON bool
	test := &cobra.Command{
		Use:   "test --tests FILE",
		Short: "Check expected decisions from a policy test file",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(testsFile)
			if err != nil {
				return fmt.Errorf("read policy tests: %w", err)
			}
			tf, err := policy.ParseTests(testsFile, data)
			if err != nil {
				return err
			}
			app, g, err := a.policyScope(cmd)
			if err != nil {
				return err
			}
			results, err := tf.Run(func(act policy.Action) (*policy.Bundle, error) { return bundleFor(g, app, act) })
			if err != nil {
				return err
			}
			failed := 0
			for _, r := range results {
				if !r.Passed {
					failed++
				}
			}
			if testJSON {
				if err := a.printJSON(struct {
					OK      bool                `json:"ok"`
					Passed  int                 `json:"passed"`
					Failed  int                 `json:"failed"`
					Results []policy.CaseResult `json:"results"`
				}{failed == 0, len(results) - failed, failed, results}); err != nil {
					return err
				}
			} else {
				for _, r := range results {
					if !r.Passed {
						fmt.Fprintf(a.io.Out, "FAIL %s: expected %s, got %s (%s)\n", r.ID, r.Expect, r.Actual, firstNonEmpty(r.Reason, "rule "+r.RuleID))
					}
				}
				fmt.Fprintf(a.io.Out, "%d passed, %d failed\n", len(results)-failed, failed)
			}
			if failed > 0 {
				return &SilentError{Err: errReported}
			}
			return nil
		}),
	}
	test.Flags().StringVar(&testsFile, "tests", "", "policy test file (YAML: version, cases)")
	test.Flags().BoolVar(&testJSON, "json", false, "print the result as JSON")
	_ = test.MarkFlagRequired("tests")

	var req policy.Request
	var action string
	var explainJSON bool
	explain := &cobra.Command{
		Use:   "explain --actor A --action X [--branch B] [--target-branch T]",
		Short: "Show the decision for one request and the rule that made it",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			req.Action = policy.Action(action)
			if !req.Action.Valid() {
				return usagef("unknown --action %q", action)
			}
			app, g, err := a.policyScope(cmd)
			if err != nil {
				return err
			}
			b, err := bundleFor(g, app, req.Action)
			if err != nil {
				return err
			}
			d, err := b.Decide(req)
			if err != nil {
				return err
			}
			if explainJSON {
				return a.printJSON(struct {
					Actor        string  `json:"actor"`
					Action       string  `json:"action"`
					Branch       *string `json:"branch"`
					TargetBranch *string `json:"target_branch"`
					Allowed      bool    `json:"allowed"`
					Decision     string  `json:"decision"`
					RuleID       *string `json:"rule_id"`
					Reason       *string `json:"reason"`
					Bundle       string  `json:"bundle"`
					Resource     string  `json:"resource"`
				}{req.Actor, action, strPtr(req.Branch), strPtr(req.TargetBranch), d.Allowed, decisionWord(d.Allowed),
					strPtr(d.RuleID), strPtr(d.Reason), b.Name(), b.Resource()})
			}
			if d.Allowed {
				fmt.Fprintf(a.io.Out, "allow: rule '%s' of bundle '%s' permits %s\n", d.RuleID, b.Name(), action)
			} else {
				fmt.Fprintf(a.io.Out, "deny: %s (bundle '%s')\n", d.Reason, b.Name())
			}
			return nil
		}),
	}
	f := explain.Flags()
	f.StringVar(&req.Actor, "actor", "", "actor id")
	f.StringVar(&action, "action", "", "action: read, export, change, schema_apply, branch_create, branch_delete, branch_merge, admin, invoke_query, graph_list")
	f.StringVar(&req.Branch, "branch", "", "branch the action reads or writes")
	f.StringVar(&req.TargetBranch, "target-branch", "", "target branch (branch_create, branch_delete, branch_merge, schema_apply)")
	f.BoolVar(&explainJSON, "json", false, "print the result as JSON")
	_ = explain.MarkFlagRequired("actor")
	_ = explain.MarkFlagRequired("action")

	for _, c := range []*cobra.Command{validate, test, explain} {
		acceptGlobals(c, "cluster", "graph")
		cmd.AddCommand(c)
	}
	return cmd
}

func decisionWord(allowed bool) string {
	if allowed {
		return "allow"
	}
	return "deny"
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
