package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// TestClusterApplyKilled kills `omnigraph cluster apply` (the real binary)
// at each of its durable steps. Before the state CAS the ledger is
// byte-for-byte the old one; after it, the new one. Either way the killed
// process leaves its lock, which status reports and force-unlock removes by
// id, and the next apply converges to a servable cluster.
func TestClusterApplyKilled(t *testing.T) {
	cases := []struct {
		point     string
		published bool
	}{
		{"cluster/before-graph-init", false},
		{"cluster/after-graph-init", false},
		{"cluster/before-state-cas", false},
		{"cluster/after-state-cas", true},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			t.Setenv("OMNIGRAPH_HOME", t.TempDir())
			dir := writeClusterDir(t)
			if code, _, errs := runCLI(t, "cluster", "import", "--config", dir); code != 0 {
				t.Fatal(errs)
			}
			statePath := filepath.Join(dir, "__cluster", "state.json")
			before, _ := os.ReadFile(statePath)
			r, err := procRun(omnigraphBin(t), []string{failpoint.EnvVar + "=" + c.point + "=exit"}, "cluster", "apply", "--config", dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.code != failpoint.ExitCode {
				t.Fatalf("apply exit %d, want the failpoint's %d\n%s", r.code, failpoint.ExitCode, r.stderr)
			}
			after, _ := os.ReadFile(statePath)
			if c.published == (string(after) == string(before)) {
				t.Fatalf("published=%v but state changed=%v", c.published, string(after) != string(before))
			}
			if !c.published {
				if app, err := cluster.LoadApplied(t.Context(), dir, cluster.Options{}); err != nil || len(app.Graphs) != 0 {
					t.Fatalf("a killed apply published graphs: %v %+v", err, app)
				}
			}

			code, out, _ := runCLI(t, "cluster", "status", "--config", dir, "--json")
			var st struct {
				Locked bool `json:"locked"`
				Lock   struct {
					ID string `json:"lock_id"`
				} `json:"lock"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Locked || st.Lock.ID == "" {
				t.Fatalf("status after the kill: %d %s", code, out)
			}
			if code, _, _ := runCLI(t, "cluster", "apply", "--config", dir); code != 1 {
				t.Fatal("apply ran under the dead process's lock")
			}
			if code, _, errs := runCLI(t, "cluster", "force-unlock", st.Lock.ID, "--config", dir); code != 0 {
				t.Fatalf("force-unlock: %s", errs)
			}
			code, out, errs := runCLI(t, "cluster", "apply", "--config", dir, "--json")
			var ap struct {
				OK        bool `json:"ok"`
				Converged bool `json:"converged"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &ap) != nil || !ap.OK || !ap.Converged {
				t.Fatalf("apply after recovery: %d %s %s", code, out, errs)
			}
			app, err := cluster.LoadApplied(t.Context(), dir, cluster.Options{})
			if err != nil || len(app.Graphs) != 1 || len(app.Graphs[0].Queries) != 1 || app.Graphs[0].Policy == nil || app.Server == nil || app.Graphs[0].Quarantine != "" {
				t.Fatalf("applied after recovery: %v %+v", err, app)
			}
			if _, err := omnigraph.Open(t.Context(), app.Graphs[0].URI, omnigraph.Options{}); err != nil {
				t.Fatal(err)
			}
			if code, out, _ := runCLI(t, "cluster", "plan", "--config", dir); code != 0 || !strings.Contains(out, "no changes") {
				t.Fatalf("plan after recovery: %s", out)
			}
		})
	}
}
