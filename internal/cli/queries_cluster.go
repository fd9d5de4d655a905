package cli

import (
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/spf13/cobra"
)

// storedQueryJSON is one entry of `queries list --json` (the shape of the
// server's GET /queries, plus mcp_expose).
type storedQueryJSON struct {
	Name        string      `json:"name"`
	MCPExpose   bool        `json:"mcp_expose"`
	ToolName    string      `json:"tool_name"`
	Mutation    bool        `json:"mutation"`
	Params      []paramJSON `json:"params"`
	Description *string     `json:"description,omitempty"`
	Instruction *string     `json:"instruction,omitempty"`
}

// signature renders the query as the listings print it:
// "NAME (read|mutation) ($p: Kind, …)".
func (q storedQueryJSON) signature() string {
	kind := "read"
	if q.Mutation {
		kind = "mutation"
	}
	ps := make([]string, len(q.Params))
	for i, p := range q.Params {
		ps[i] = "$" + p.Name + ": " + p.Kind
	}
	return fmt.Sprintf("%s (%s) (%s)", q.Name, kind, strings.Join(ps, ", "))
}

type paramJSON struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	ItemKind  *string `json:"item_kind,omitempty"`
	VectorDim *int    `json:"vector_dim,omitempty"`
	Nullable  bool    `json:"nullable"`
}

// clusterQueries describes the applied stored queries of the --cluster
// graph(s) against each graph's current schema. Queries that no longer
// compile are returned in broken.
func (a *app) clusterQueries(cmd *cobra.Command) (map[string][]storedQueryJSON, map[string][]string, error) {
	app, err := a.appliedCluster(cmd)
	if err != nil {
		return nil, nil, err
	}
	graphs := app.Graphs
	if a.g.graph != "" {
		g := app.Graph(a.g.graph)
		if g == nil {
			return nil, nil, fmt.Errorf("graph %q is not applied in this cluster", a.g.graph)
		}
		graphs = []*cluster.AppliedGraph{g}
	}
	out, broken := map[string][]storedQueryJSON{}, map[string][]string{}
	for _, ag := range graphs {
		out[ag.ID] = []storedQueryJSON{}
		g, err := omnigraph.Open(cmd.Context(), ag.URI, omnigraph.Options{})
		if err != nil {
			broken[ag.ID] = append(broken[ag.ID], fmt.Sprintf("graph %s: %v", ag.ID, err))
			continue
		}
		for _, q := range ag.Queries {
			info, err := g.DescribeQuery(cmd.Context(), omnigraph.Target{}, q.Source, q.Name)
			if err != nil {
				broken[ag.ID] = append(broken[ag.ID], fmt.Sprintf("query.%s.%s: %v", ag.ID, q.Name, err))
				continue
			}
			e := storedQueryJSON{Name: q.Name, MCPExpose: true, ToolName: q.Name, Mutation: info.Mutation,
				Params: []paramJSON{}, Description: strPtr(info.Description), Instruction: strPtr(info.Instruction)}
			for _, p := range info.Params {
				pj := paramJSON{Name: p.Name, Kind: p.Kind, ItemKind: strPtr(p.ItemKind), Nullable: p.Nullable}
				if p.VectorDim > 0 {
					d := p.VectorDim
					pj.VectorDim = &d
				}
				e.Params = append(e.Params, pj)
			}
			out[ag.ID] = append(out[ag.ID], e)
		}
	}
	return out, broken, nil
}

func (a *app) printClusterQueries(out map[string][]storedQueryJSON, asJSON bool) error {
	if asJSON {
		if a.g.graph != "" {
			return a.printJSON(struct {
				Queries []storedQueryJSON `json:"queries"`
			}{out[a.g.graph]})
		}
		type graphQueries struct {
			Graph   string            `json:"graph"`
			Queries []storedQueryJSON `json:"queries"`
		}
		all := []graphQueries{}
		for _, id := range sortedMapKeys(out) {
			all = append(all, graphQueries{id, out[id]})
		}
		return a.printJSON(struct {
			Graphs []graphQueries `json:"graphs"`
		}{all})
	}
	for _, id := range sortedMapKeys(out) {
		for _, q := range out[id] {
			fmt.Fprintf(a.io.Out, "%s.%s\n", id, q.signature())
		}
	}
	return nil
}

func (a *app) newQueriesValidateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Type-check a cluster's applied stored queries against each graph's schema",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			if a.g.cluster == "" {
				return usagef("queries validate reads a cluster's applied queries: give --cluster DIR|URI")
			}
			out, broken, err := a.clusterQueries(cmd)
			if err != nil {
				return err
			}
			n, bad := 0, 0
			for _, qs := range out {
				n += len(qs)
			}
			var problems []string
			for _, id := range sortedMapKeys(broken) {
				bad += len(broken[id])
				problems = append(problems, broken[id]...)
			}
			if asJSON {
				if problems == nil {
					problems = []string{}
				}
				if err := a.printJSON(struct {
					OK       bool     `json:"ok"`
					Valid    int      `json:"valid"`
					Broken   int      `json:"broken"`
					Problems []string `json:"problems"`
				}{bad == 0, n, bad, problems}); err != nil {
					return err
				}
			} else {
				for _, p := range problems {
					fmt.Fprintln(a.io.Out, "broken: "+p)
				}
				fmt.Fprintf(a.io.Out, "%d stored queries valid, %d broken\n", n, bad)
			}
			if bad > 0 {
				return &SilentError{Err: errReported}
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	acceptGlobals(cmd, "cluster", "graph")
	return cmd
}
