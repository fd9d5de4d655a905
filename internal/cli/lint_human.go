package cli

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// writeLintHuman renders a lint report for a terminal: one line per query,
// then findings, then a summary line.
func writeLintHuman(stdio *IO, rep *query.LintReport) {
	w := stdio.Out
	for _, r := range rep.Results {
		switch r.Status {
		case "ok":
			fmt.Fprintf(w, "ok     %s (%s)\n", r.Name, r.Kind)
		default:
			fmt.Fprintf(w, "error  %s (%s): %s\n", r.Name, r.Kind, r.Error)
		}
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "       warning: %s\n", warn)
		}
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s %s: %s\n", f.Severity, f.Code, f.Message)
	}
	fmt.Fprintf(w, "%s: %d queries, %d errors, %d warnings\n", rep.QueryPath, rep.QueriesProcessed, rep.Errors, rep.Warnings)
}
