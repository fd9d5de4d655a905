package policy

import (
	"fmt"
	"strings"
)

// TestFile is a policy test file (`omnigraph policy test --tests FILE`):
// named requests with the expected decision.
type TestFile struct {
	Version int        `yaml:"version"`
	Cases   []TestCase `yaml:"cases"`
}

// TestCase is one expected decision.
type TestCase struct {
	ID           string `yaml:"id"`
	Actor        string `yaml:"actor"`
	Action       Action `yaml:"action"`
	Branch       string `yaml:"branch"`
	TargetBranch string `yaml:"target_branch"`
	Expect       string `yaml:"expect"` // allow | deny
}

// ParseTests reads and checks a policy test file (strict, like Parse).
func ParseTests(name string, data []byte) (*TestFile, error) {
	var f TestFile
	doc, err := decodeStrict(data, &f)
	if err != nil {
		return nil, &FileError{Name: name, Problems: yamlProblems(err)}
	}
	lines := seqItemLines(doc, "cases")
	var probs []Problem
	add := func(line int, path, format string, args ...any) {
		probs = append(probs, Problem{Line: line, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if f.Version != 1 {
		add(0, "version", "must be 1 (got %d)", f.Version)
	}
	ids := map[string]bool{}
	for i, c := range f.Cases {
		line, p := lineAt(lines, i), fmt.Sprintf("cases[%d]", i)
		checkID(add, line, p, "case", c.ID, ids)
		if strings.TrimSpace(c.Actor) == "" {
			add(line, p+".actor", "a case needs an actor")
		}
		if !c.Action.Valid() {
			add(line, p+".action", "unknown action %q (valid: %s)", c.Action, actionList())
		}
		if c.Expect != "allow" && c.Expect != "deny" {
			add(line, p+".expect", "must be allow or deny (got %q)", c.Expect)
		}
	}
	if len(probs) > 0 {
		return nil, &FileError{Name: name, Problems: probs}
	}
	return &f, nil
}

// CaseResult is the outcome of one test case.
type CaseResult struct {
	ID       string `json:"id"`
	Expect   string `json:"expect"`
	Actual   string `json:"actual"`
	RuleID   string `json:"rule_id,omitempty"`
	Passed   bool   `json:"passed"`
	Reason   string `json:"reason,omitempty"`
	Bundle   string `json:"bundle"`
	Resource string `json:"resource"`
}

// Run decides every case. pick returns the bundle a case is checked against
// (the graph bundle, or the server bundle for graph_list).
func (f *TestFile) Run(pick func(Action) (*Bundle, error)) ([]CaseResult, error) {
	out := make([]CaseResult, 0, len(f.Cases))
	for _, c := range f.Cases {
		b, err := pick(c.Action)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		d, err := b.Decide(Request{Actor: c.Actor, Action: c.Action, Branch: c.Branch, TargetBranch: c.TargetBranch})
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		actual := "deny"
		if d.Allowed {
			actual = "allow"
		}
		out = append(out, CaseResult{ID: c.ID, Expect: c.Expect, Actual: actual, RuleID: d.RuleID,
			Passed: actual == c.Expect, Reason: d.Reason, Bundle: b.Name(), Resource: b.Resource()})
	}
	return out, nil
}
