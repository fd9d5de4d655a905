package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

// The human rendering of entity changes, shared by `commit changes` and
// `diff`: one line a change, edges by their endpoints (their ids are
// generated and mean nothing to people), updates by the properties they
// changed with old → new values:
//
//	insert node:Person Eve {age: 22, name: "Eve"}
//	update node:Person Bob: age 25 → 99
//	delete node:Person Diana
//	insert edge:Knows Eve -> Alice
//	update edge:Knows Alice -> Bob: since null → "2020-01-01"
//
// Values are the canonical JSON of spec/languages.md §2.2 (strings quoted,
// so "" and null differ); nulls are left out of an insert's properties.

// entityChangeLine renders one change.
func entityChangeLine(c omnigraph.Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %s:%s %s", c.Op, c.Kind, c.Type, changeSubject(c))
	switch c.Op {
	case "insert":
		if props := nonNullProps(c.After); props != "" {
			b.WriteString(" " + props)
		}
	case "update":
		var parts []string
		if c.EndpointsChanged() {
			parts = append(parts, fmt.Sprintf("endpoints %s -> %s → %s -> %s", c.BeforeSrc, c.BeforeDst, c.Src, c.Dst))
		}
		for _, p := range c.ChangedProperties() {
			parts = append(parts, fmt.Sprintf("%s %s → %s", p, jsonText(c.Before[p]), jsonText(c.After[p])))
		}
		if len(parts) > 0 {
			b.WriteString(": " + strings.Join(parts, ", "))
		}
	}
	return b.String()
}

// changeSubject names the entity: a node by its id, an edge by its
// endpoints (the before image's for a delete).
func changeSubject(c omnigraph.Change) string {
	if c.Kind != "edge" {
		return c.ID
	}
	if c.Op == "update" && c.EndpointsChanged() {
		return c.BeforeSrc + " -> " + c.BeforeDst
	}
	return c.Src + " -> " + c.Dst
}

// nonNullProps renders an image's non-null properties as {k: v, …},
// sorted by name; "" when there are none.
func nonNullProps(img map[string]any) string {
	var keys []string
	for k, v := range img {
		if s := jsonText(v); s != "null" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + jsonText(img[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// jsonText renders a JSON-encoded image value as its JSON text.
func jsonText(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		return string(raw)
	}
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// writeChanges prints one line a change.
func writeChanges(w io.Writer, chs []omnigraph.Change) {
	for _, ch := range chs {
		fmt.Fprintln(w, entityChangeLine(ch))
	}
}
