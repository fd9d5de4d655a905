package cli

import (
	"os"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/spf13/cobra"
)

// wireCompletion adds dynamic shell completion (`omnigraph completion
// bash|zsh|fish|powershell`) beyond flag names: branch names for branch
// arguments and --branch/--from/--into/--snapshot, and the query names of
// the --query file for query and mutate NAME. Completion opens the graph
// the command line addresses read-only and never fails loudly: when it
// cannot list names it offers none.
func (a *app) wireCompletion(root *cobra.Command) {
	branchArg := map[string]bool{
		"omnigraph branch delete": true, "omnigraph branch merge": true,
	}
	queryArg := map[string]bool{"omnigraph query": true, "omnigraph mutate": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := c.CommandPath()
		switch {
		case branchArg[path]:
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return a.branchNames(cmd), cobra.ShellCompDirectiveNoFileComp
			}
		case queryArg[path]:
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return queryNames(flagString(cmd, "query")), cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, name := range []string{"branch", "from", "into", "snapshot"} {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
					return a.branchNames(cmd), cobra.ShellCompDirectiveNoFileComp
				})
			}
		}
	}
	walk(root)
}

// branchNames lists the branches of the graph the command line addresses
// (--store, --uri or the operator config's default store), or nothing.
func (a *app) branchNames(cmd *cobra.Command) []string {
	uri, err := a.graphURI(nil, flagString(cmd, "uri"))
	if err != nil {
		return nil
	}
	g, err := a.openGraph(cmd.Context(), uri)
	if err != nil {
		return nil
	}
	names, err := g.Branches(cmd.Context())
	if err != nil {
		return nil
	}
	return names
}

// queryNames lists the queries declared in a .gq file.
func queryNames(path string) []string {
	if path == "" || path == "-" {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	ast, _ := query.Parse(path, string(src))
	if ast == nil {
		return nil
	}
	var out []string
	for _, q := range ast.Queries {
		if q.Name != "" && !slices.Contains(out, q.Name) {
			out = append(out, q.Name)
		}
	}
	return out
}
