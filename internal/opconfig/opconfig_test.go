package opconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAndTokens(t *testing.T) {
	home := t.TempDir()
	cfg := `operator: { actor: act-andrew }
servers:
  prod: { url: https://graph.example.com }
  intel-dev: { url: http://127.0.0.1:8080/ }
defaults: { output: table, server: prod, default_graph: knowledge }
clusters: { brain: { root: s3://acme/clusters/brain } }
profiles:
  staging: { server: prod, default_graph: knowledge }
aliases:
  triage: { server: intel-dev, graph: spike, query: weekly_triage, args: [since], params: { limit: 20 }, format: table }
future_key: 1
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c, warnings, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "future_key") {
		t.Errorf("warnings %v", warnings)
	}
	if c.Operator.Actor != "act-andrew" || c.Aliases["triage"].Params["limit"] != 20 || c.Clusters["brain"].Root == "" {
		t.Fatalf("config %+v", c)
	}
	if err := WriteCredentials(home, map[string]string{"intel-dev": "cred-token"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	tok := func(url string) string {
		t.Helper()
		s, err := c.Token(url, getenv)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := tok("http://127.0.0.1:8080/graphs/spike/queries/x"); got != "cred-token" {
		t.Errorf("credentials lookup: %q", got)
	}
	env["OMNIGRAPH_TOKEN_INTEL_DEV"] = "env-token"
	env["OMNIGRAPH_BEARER_TOKEN"] = "fallback"
	if got := tok("http://127.0.0.1:8080/graphs"); got != "env-token" {
		t.Errorf("per-server env: %q", got)
	}
	if got := tok("https://graph.example.com/graphs"); got != "fallback" {
		t.Errorf("named server without token: %q", got)
	}
	if got := tok("http://elsewhere:1/graphs"); got != "fallback" {
		t.Errorf("unnamed URL: %q", got)
	}
	if got := tok("https://graph.example.com.evil/graphs"); got != "fallback" {
		t.Errorf("prefix must match at a path boundary: %q", got)
	}
	if u, name, err := c.ServerURL("intel-dev"); err != nil || u != "http://127.0.0.1:8080" || name != "intel-dev" {
		t.Errorf("ServerURL: %q %q %v", u, name, err)
	}
	if _, _, err := c.ServerURL("nope"); err == nil {
		t.Error("unknown server name accepted")
	}
	st, _ := os.Stat(CredentialsPath(home))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("credentials mode %o", st.Mode().Perm())
	}
	if err := os.Chmod(CredentialsPath(home), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(env, "OMNIGRAPH_TOKEN_INTEL_DEV")
	if _, err := c.Token("http://127.0.0.1:8080/x", getenv); !errors.Is(err, ErrInsecureCredentials) {
		t.Errorf("group-readable credentials: %v", err)
	}
}

func TestLoadRejects(t *testing.T) {
	for name, cfg := range map[string]string{
		"bad yaml":           "servers: [",
		"server and store":   "defaults: { server: a, store: b }\n",
		"profile binds none": "profiles: { p: { default_graph: g } }\n",
		"profile binds two":  "profiles: { p: { server: a, store: b } }\n",
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(home); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if c, _, err := Load(t.TempDir()); err != nil || len(c.Servers) != 0 {
		t.Errorf("absent config: %v", err)
	}
}
