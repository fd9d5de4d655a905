package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrInvalid marks every policy-file and policy-test-file problem; test with
// errors.Is. The concrete error is a *FileError.
var ErrInvalid = errors.New("invalid policy")

// Problem is one thing wrong with a file, located when the line is known.
type Problem struct {
	Line    int    // 1-based; 0 when unknown
	Path    string // e.g. "rules[2].allow.actions"
	Message string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// FileError lists every problem found in one file.
type FileError struct {
	Name     string // the file name as given
	Problems []Problem
}

func (e *FileError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("invalid policy file %s: %s", e.Name, strings.Join(parts, "; "))
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *FileError) Unwrap() error { return ErrInvalid }

// File is a parsed, semantically checked policy file.
type File struct {
	Version           int                 `yaml:"version"`
	Groups            map[string][]string `yaml:"groups"`
	ProtectedBranches []string            `yaml:"protected_branches"`
	Rules             []Rule              `yaml:"rules"`
}

// Rule grants actions to a group, optionally only on protected or
// unprotected branches.
type Rule struct {
	ID    string `yaml:"id"`
	Allow *Allow `yaml:"allow"`
}

// Allow is a rule's grant.
type Allow struct {
	Actors            *Actors  `yaml:"actors"`
	Actions           []Action `yaml:"actions"`
	BranchScope       Scope    `yaml:"branch_scope"`
	TargetBranchScope Scope    `yaml:"target_branch_scope"`
}

// Actors names who a rule grants to.
type Actors struct {
	Group string `yaml:"group"`
}

// Kind says which resources a bundle can be bound to.
type Kind int

// The kinds. KindEmpty (no rules) binds anywhere and permits nothing.
const (
	KindEmpty Kind = iota
	KindGraph
	KindServer
)

func (k Kind) String() string {
	switch k {
	case KindGraph:
		return "graph-scoped"
	case KindServer:
		return "server-scoped"
	}
	return "empty"
}

// decodeStrict decodes one YAML document into v, rejecting unknown fields and
// duplicate keys, and returns the document node for line lookups.
func decodeStrict(data []byte, v any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("the file holds more than one YAML document")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// yamlProblems turns a yaml decode error into problems, one per line the
// decoder reported.
func yamlProblems(err error) []Problem {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		out := make([]Problem, 0, len(te.Errors))
		for _, e := range te.Errors {
			out = append(out, Problem{Message: strings.TrimPrefix(e, "yaml: ")})
		}
		return out
	}
	return []Problem{{Message: strings.TrimPrefix(err.Error(), "yaml: ")}}
}

// seqItemLines returns the line of each item of the sequence under key in
// the document's top-level mapping.
func seqItemLines(doc *yaml.Node, key string) []int {
	if doc == nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.SequenceNode {
			lines := make([]int, len(m.Content[i+1].Content))
			for j, it := range m.Content[i+1].Content {
				lines[j] = it.Line
			}
			return lines
		}
	}
	return nil
}

func lineAt(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// Parse reads and checks a policy file. name is used in messages only.
func Parse(name string, data []byte) (*File, error) {
	var f File
	doc, err := decodeStrict(data, &f)
	if err != nil {
		return nil, &FileError{Name: name, Problems: yamlProblems(err)}
	}
	if probs := f.check(seqItemLines(doc, "rules")); len(probs) > 0 {
		return nil, &FileError{Name: name, Problems: probs}
	}
	return &f, nil
}

func (f *File) check(ruleLines []int) []Problem {
	var probs []Problem
	add := func(line int, path, format string, args ...any) {
		probs = append(probs, Problem{Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if f.Version != 1 {
		add(0, "version", "must be 1 (got %d)", f.Version)
	}
	for _, g := range sortedKeys(f.Groups) {
		if strings.TrimSpace(g) == "" {
			add(0, "groups", "group names must not be blank")
		}
		members := f.Groups[g]
		if len(members) == 0 {
			add(0, "groups."+g, "a group needs at least one actor")
		}
		seen := map[string]bool{}
		for _, m := range members {
			switch {
			case strings.TrimSpace(m) == "":
				add(0, "groups."+g, "actor ids must not be blank")
			case seen[m]:
				add(0, "groups."+g, "actor %q is listed twice", m)
			}
			seen[m] = true
		}
	}
	for i, b := range f.ProtectedBranches {
		if strings.TrimSpace(b) == "" {
			add(0, fmt.Sprintf("protected_branches[%d]", i), "branch names must not be blank")
		}
	}
	ids := map[string]bool{}
	kinds := map[Kind]bool{}
	for i, r := range f.Rules {
		line := lineAt(ruleLines, i)
		p := fmt.Sprintf("rules[%d]", i)
		checkID(add, line, p, "rule", r.ID, ids)
		if r.Allow == nil {
			add(line, p+".allow", "a rule needs an allow block")
			continue
		}
		a := r.Allow
		if a.Actors == nil || a.Actors.Group == "" {
			add(line, p+".allow.actors", "name a group: actors: { group: NAME }")
		} else if _, ok := f.Groups[a.Actors.Group]; !ok {
			add(line, p+".allow.actors.group", "group %q is not declared under groups", a.Actors.Group)
		}
		if len(a.Actions) == 0 {
			add(line, p+".allow.actions", "a rule needs at least one action")
		}
		seen := map[Action]bool{}
		server, graph := false, false
		for _, act := range a.Actions {
			if !act.Valid() {
				add(line, p+".allow.actions", "unknown action %q (valid: %s)", act, actionList())
				continue
			}
			if seen[act] {
				add(line, p+".allow.actions", "action %q is listed twice", act)
			}
			seen[act] = true
			if act.ServerScoped() {
				server = true
			} else {
				graph = true
			}
			if a.BranchScope != "" && !act.BranchScoped() {
				add(line, p+".allow.branch_scope", "branch_scope applies only to read, export and change, not %q", act)
			}
			if a.TargetBranchScope != "" && !act.TargetScoped() {
				add(line, p+".allow.target_branch_scope", "target_branch_scope applies only to branch_create, schema_apply, branch_delete and branch_merge, not %q", act)
			}
		}
		if server && graph {
			add(line, p+".allow.actions", "graph_list cannot be mixed with per-graph actions in one rule")
		}
		if server {
			kinds[KindServer] = true
		} else if graph {
			kinds[KindGraph] = true
		}
		if a.BranchScope != "" && a.TargetBranchScope != "" {
			add(line, p+".allow", "give at most one of branch_scope and target_branch_scope")
		}
		if a.BranchScope != "" && !a.BranchScope.valid() {
			add(line, p+".allow.branch_scope", "unknown scope %q (valid: any, protected, unprotected)", a.BranchScope)
		}
		if a.TargetBranchScope != "" && !a.TargetBranchScope.valid() {
			add(line, p+".allow.target_branch_scope", "unknown scope %q (valid: any, protected, unprotected)", a.TargetBranchScope)
		}
	}
	if kinds[KindServer] && kinds[KindGraph] {
		add(0, "rules", "a bundle is either graph-scoped or server-scoped (graph_list only): split it into two files")
	}
	return probs
}

// Kind reports whether the bundle grants per-graph actions, graph_list, or
// nothing. Parse guarantees it is not mixed.
func (f *File) Kind() Kind {
	for _, r := range f.Rules {
		for _, a := range r.Allow.Actions {
			if a.ServerScoped() {
				return KindServer
			}
			return KindGraph
		}
	}
	return KindEmpty
}

// Actors returns every actor id the file names, sorted.
func (f *File) Actors() []string {
	set := map[string]bool{}
	for _, ms := range f.Groups {
		for _, m := range ms {
			set[m] = true
		}
	}
	return sortedKeys(set)
}

func actionList() string {
	var s []string
	for _, a := range Actions() {
		s = append(s, string(a))
	}
	return strings.Join(s, ", ")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// checkID reports the id of the entry at path (what: "rule", "case") when
// it is blank or already in ids, and records it there.
func checkID(add func(line int, path, format string, args ...any), line int, path, what, id string, ids map[string]bool) {
	switch {
	case strings.TrimSpace(id) == "":
		add(line, path+".id", "a %s needs a non-blank id", what)
	case ids[id]:
		add(line, path+".id", "duplicate %s id %q", what, id)
	}
	ids[id] = true
}
