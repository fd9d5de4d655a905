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
		case "error":
			if len(r.Diagnostics) == 0 {
				fmt.Fprintf(w, "error  %s (%s): %s\n", r.Name, r.Kind, r.Error)
				break
			}
			// Every error, each with its position: nothing hidden behind
			// "(and N more errors)".
			fmt.Fprintf(w, "error  %s (%s):\n", r.Name, r.Kind)
			for _, e := range r.Diagnostics {
				fmt.Fprintf(w, "       %s%s\n", e.Error(), sourcePosition(e))
			}
		}
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "       warning: %s\n", warn)
		}
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s %s: %s\n", f.Severity, f.Code, f.Message)
	}
	// Errors counts failing queries and file-level findings; the summary
	// also says how many diagnostics they hold.
	diags := 0
	for _, f := range rep.Findings {
		diags += btoi(f.Severity == "error")
	}
	for _, r := range rep.Results {
		diags += max(len(r.Diagnostics), btoi(r.Status == "error"))
	}
	detail := ""
	if diags != rep.Errors {
		detail = fmt.Sprintf(" (%d diagnostics)", diags)
	}
	fmt.Fprintf(w, "%s: %d queries, %d errors%s, %d warnings\n", rep.QueryPath, rep.QueriesProcessed, rep.Errors, detail, rep.Warnings)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
