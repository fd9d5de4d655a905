package cli

import (
	"strings"
)

// stmtReader cuts shell input lines into statements. The rules, in order:
//
//   - on an empty buffer, a line starting with ':' is a meta-command, and a
//     blank line is nothing;
//   - a statement that starts with the keyword `query` ends on the line
//     where its braces balance again (after the first '{');
//   - any statement ends at a ';' outside braces at the end of a line (the
//     ';' is dropped), or at a blank line.
//
// Braces inside "strings" and after // comments do not count. A statement
// that does not start with `query` is a query body (match … return …,
// insert …, update …, delete …): it runs as `query shell() { BODY }`.
type stmtReader struct {
	buf    []string
	depth  int  // brace depth at the end of buf
	opened bool // some '{' was seen
}

// pending reports whether a statement is partly read (the prompt shows it).
func (r *stmtReader) pending() bool { return len(r.buf) > 0 }

// reset drops a partly read statement.
func (r *stmtReader) reset() { *r = stmtReader{} }

// add takes one input line and returns a complete statement, if this line
// ends one, and whether it is a meta-command.
func (r *stmtReader) add(line string) (stmt string, meta, done bool) {
	trimmed := strings.TrimSpace(line)
	if len(r.buf) == 0 {
		switch {
		case trimmed == "":
			return "", false, false
		case strings.HasPrefix(trimmed, ":"):
			return trimmed, true, true
		}
	}
	if trimmed == "" {
		return r.finish(""), false, true
	}
	code := r.scan(line)
	if r.depth <= 0 && strings.HasSuffix(strings.TrimSpace(code), ";") {
		cut := strings.LastIndex(line, ";")
		return r.finish(line[:cut]), false, true
	}
	r.buf = append(r.buf, line)
	if r.depth <= 0 && r.opened && isQueryDecl(strings.Join(r.buf, "\n")) {
		return r.finish(""), false, true
	}
	return "", false, false
}

// finish returns the statement read so far plus last, and empties r.
func (r *stmtReader) finish(last string) string {
	if last != "" {
		r.buf = append(r.buf, last)
	}
	s := strings.TrimSpace(strings.Join(r.buf, "\n"))
	r.reset()
	return s
}

// scan updates the brace depth with one line and returns its code part
// (the line without a trailing // comment).
func (r *stmtReader) scan(line string) string {
	inString, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return line[:i]
		case c == '{':
			r.depth++
			r.opened = true
		case c == '}':
			r.depth--
		}
	}
	return line
}

// isQueryDecl reports whether a statement is a full query declaration
// (`query NAME(…) { … }`, possibly after comments) rather than a body.
func isQueryDecl(stmt string) bool {
	for _, l := range strings.Split(stmt, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return l == "query" || strings.HasPrefix(l, "query ") || strings.HasPrefix(l, "query\t")
	}
	return false
}

// shellWrapOpen opens the query a body runs as.
const shellWrapOpen = "query shell() { "

// shellSource turns a statement into query source: a declaration as is,
// a body wrapped as the query `shell`.
func shellSource(stmt string) string {
	if isQueryDecl(stmt) {
		return stmt
	}
	// On the statement's first line, so that error lines are the user's.
	return shellWrapOpen + stmt + "\n}\n"
}
