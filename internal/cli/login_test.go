package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoginLogoutProfile(t *testing.T) {
	home := freshHome(t)
	writeFile(t, home, "config.yaml", "servers: { prod: { url: https://g.example.com } }\nprofiles:\n  staging: { server: prod, default_graph: knowledge }\n  local: { store: /data/dev.omni }\n")
	if code, out, errs := runCLI(t, "login", "prod", "--token", "s3cret"); code != 0 || !strings.Contains(out, "stored the token for prod") {
		t.Fatalf("login: %d %s %s", code, out, errs)
	}
	st, err := os.Stat(filepath.Join(home, "credentials"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", err, st)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "credentials")); string(b) != "[prod]\ntoken = s3cret\n\n" {
		t.Fatalf("credentials %q", b)
	}
	// A token from stdin.
	var out, errb strings.Builder
	code := Main(t.Context(), []string{"login", "other"}, &IO{In: strings.NewReader("tok2\n"), Out: &out, Err: &errb})
	if code != 0 || !strings.Contains(errb.String(), "not a servers: entry") {
		t.Fatalf("login from stdin: %d %s", code, errb.String())
	}
	if code, out, _ := runCLI(t, "logout", "prod", "--json"); code != 0 || !strings.Contains(out, `"removed": true`) {
		t.Fatalf("logout: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "logout", "prod"); code != 0 || !strings.Contains(out, "no token stored") {
		t.Fatalf("second logout: %d %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "credentials")); string(b) != "[other]\ntoken = tok2\n\n" {
		t.Fatalf("credentials after logout %q", b)
	}
	if err := os.Chmod(filepath.Join(home, "credentials"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "login", "prod", "--token", "x"); code != 1 || !strings.Contains(errs, "readable by other users") {
		t.Fatalf("login over a world-readable file: %d %s", code, errs)
	}
	if code, out, _ := runCLI(t, "profile", "list"); code != 0 || out != "local: store /data/dev.omni\nstaging: server prod, graph knowledge\n" {
		t.Fatalf("profile list: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "profile", "show", "--profile", "staging", "--json"); code != 0 || !strings.Contains(out, `"default_graph": "knowledge"`) {
		t.Fatalf("profile show: %d %s", code, out)
	}
}
