package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// The text renderings: short, for a model or a person reading the
// transcript; the structured content is the full answer.

// maxTextRows bounds the rows and changes a text rendering lists.
const maxTextRows = 50

type commitBody struct {
	GraphCommitID string `json:"graph_commit_id"`
	GraphBranch   string `json:"graph_branch"`
	ActorID       string `json:"actor_id"`
	CreatedAt     int64  `json:"created_at"`
}

type changeBody struct {
	Kind string `json:"kind"`
	Type struct {
		Name string `json:"name"`
	} `json:"type"`
	ID string `json:"id"`
	Op string `json:"op"`
}

// renderRows is a read result as a pipe table of at most maxTextRows rows.
func renderRows(r remote.ReadOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d row%s", r.QueryName, r.RowCount, plural(r.RowCount))
	if r.GraphCommitID != "" {
		fmt.Fprintf(&b, " at commit %s", r.GraphCommitID)
	}
	if len(r.Columns) == 0 || len(r.Rows) == 0 {
		return b.String()
	}
	b.WriteString("\n" + strings.Join(r.Columns, " | "))
	for i, row := range r.Rows {
		if i == maxTextRows {
			fmt.Fprintf(&b, "\n… %d more rows in the structured content", len(r.Rows)-i)
			break
		}
		cells := make([]string, len(r.Columns))
		for j, c := range r.Columns {
			cells[j] = string(row[c])
		}
		b.WriteString("\n" + strings.Join(cells, " | "))
	}
	return b.String()
}

// The *Out types are the parts of each tool's JSON result that its text
// rendering reads; decoded turns the result into one.

type changeOut struct {
	QueryName     string      `json:"query_name"`
	Branch        string      `json:"branch"`
	AffectedNodes int64       `json:"affected_nodes"`
	AffectedEdges int64       `json:"affected_edges"`
	Commit        *commitBody `json:"commit"`
}

func renderChange(c changeOut) string {
	s := fmt.Sprintf("%s on %s: %d node%s and %d edge%s affected", c.QueryName, c.Branch,
		c.AffectedNodes, plural(int(c.AffectedNodes)), c.AffectedEdges, plural(int(c.AffectedEdges)))
	return s + commitSuffix(c.Commit)
}

type loadOut struct {
	Branch        string      `json:"branch"`
	BranchCreated bool        `json:"branch_created"`
	Mode          string      `json:"mode"`
	TotalEntities int64       `json:"total_entities"`
	Commit        *commitBody `json:"commit"`
}

func renderLoad(l loadOut) string {
	s := fmt.Sprintf("loaded %d entit%s into %s (%s)", l.TotalEntities, pluralY(l.TotalEntities), l.Branch, l.Mode)
	if l.BranchCreated {
		s += ", branch created"
	}
	return s + commitSuffix(l.Commit)
}

type mergeOut struct {
	Source            string      `json:"source"`
	Target            string      `json:"target"`
	Outcome           string      `json:"outcome"`
	Commit            *commitBody `json:"commit"`
	BranchDeleted     *bool       `json:"branch_deleted"`
	BranchDeleteError string      `json:"branch_delete_error"`
}

func renderMerge(m mergeOut) string {
	s := fmt.Sprintf("merge %s into %s: %s", m.Source, m.Target, m.Outcome) + commitSuffix(m.Commit)
	switch {
	case m.BranchDeleted == nil:
	case *m.BranchDeleted:
		s += fmt.Sprintf("; branch %s deleted", m.Source)
	default:
		s += fmt.Sprintf("; branch %s not deleted: %s", m.Source, m.BranchDeleteError)
	}
	return s
}

type commitsOut struct {
	Commits []commitBody `json:"commits"`
}

func renderCommits(l commitsOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d commit%s, newest first", len(l.Commits), plural(len(l.Commits)))
	for i, c := range l.Commits {
		if i == maxTextRows {
			fmt.Fprintf(&b, "\n… %d more in the structured content", len(l.Commits)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s", c.GraphCommitID)
		if c.ActorID != "" {
			fmt.Fprintf(&b, " by %s", c.ActorID)
		}
	}
	return b.String()
}

// renderChanges lists entity changes; head is the first line.
func renderChanges(head string, chs []changeBody) string {
	var b strings.Builder
	b.WriteString(head)
	for i, c := range chs {
		if i == maxTextRows {
			fmt.Fprintf(&b, "\n… %d more in the structured content", len(chs)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s %s %s %s", c.Op, c.Kind, c.Type.Name, c.ID)
	}
	return b.String()
}

type commitChangesOut struct {
	Cause struct {
		GraphCommitID string `json:"graph_commit_id"`
	} `json:"cause"`
	Changes       []changeBody `json:"changes"`
	NextPageToken string       `json:"next_page_token"`
}

func renderCommitChanges(p commitChangesOut) string {
	head := fmt.Sprintf("commit %s: %d change%s", p.Cause.GraphCommitID, len(p.Changes), plural(len(p.Changes)))
	if p.NextPageToken != "" {
		head += " (more: pass page_token " + p.NextPageToken + ")"
	}
	return renderChanges(head, p.Changes)
}

type diffOut struct {
	Total     int          `json:"total"`
	Truncated bool         `json:"truncated"`
	Changes   []changeBody `json:"changes"`
}

func renderDiff(d diffOut) string {
	head := fmt.Sprintf("%d change%s", d.Total, plural(d.Total))
	if d.Truncated {
		head += fmt.Sprintf(" (first %d returned; raise limit for more)", len(d.Changes))
	}
	return renderChanges(head, d.Changes)
}

type feedOut struct {
	Blocks []struct {
		Cause struct {
			GraphCommitID string `json:"graph_commit_id"`
		} `json:"cause"`
		Changes []changeBody `json:"changes"`
	} `json:"blocks"`
	NextPageToken string `json:"next_page_token"`
	Cursor        string `json:"cursor"`
	CaughtUp      bool   `json:"caught_up"`
}

func renderFeed(f feedOut) string {
	var all []changeBody
	for _, b := range f.Blocks {
		all = append(all, b.Changes...)
	}
	head := fmt.Sprintf("%d commit%s, %d change%s", len(f.Blocks), plural(len(f.Blocks)), len(all), plural(len(all)))
	switch {
	case f.NextPageToken != "":
		head += "; the last commit continues: pass page_token " + f.NextPageToken
	case f.CaughtUp:
		head += "; caught up, next cursor " + f.Cursor
	default:
		head += "; more to read, next cursor " + f.Cursor
	}
	return renderChanges(head, all)
}

// decoded renders raw decoded as T with text; a body that does not decode
// as T is shown as it is.
func decoded[T any](raw json.RawMessage, text func(T) string) string {
	var v T
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return text(v)
}

func commitSuffix(c *commitBody) string {
	if c == nil {
		return "; nothing changed, no commit"
	}
	return "; commit " + c.GraphCommitID
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralY(n int64) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
