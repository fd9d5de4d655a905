package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestDocsMatchHelp keeps docs/cli.md and the commands' --help from
// drifting apart: every visible command is documented (its path appears in
// the guide), every flag a command declares is named there, and every
// `omnigraph X` command the guide names exists.
func TestDocsMatchHelp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	root := (&app{io: &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}}).newRoot()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "completion" || sub.Name() == "help" {
				continue
			}
			walk(sub)
		}
		if c == root {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "omnigraph ")
		if !strings.Contains(text, path) {
			t.Errorf("docs/cli.md does not mention %q", c.CommandPath())
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !strings.Contains(text, "--"+f.Name) {
				t.Errorf("docs/cli.md does not mention %s --%s", c.CommandPath(), f.Name)
			}
		})
	}
	walk(root)
	for _, m := range regexp.MustCompile("`omnigraph ([a-z-]+)").FindAllStringSubmatch(text, -1) {
		if m[1] == "check" {
			continue // an argv spelling of lint (rewriteArgs), not a command
		}
		if c, _, err := root.Find([]string{m[1]}); err != nil || c == root {
			t.Errorf("docs/cli.md names `omnigraph %s`, which is not a command", m[1])
		}
	}
}
