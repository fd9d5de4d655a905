package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

func TestUIUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no store", []string{"ui"}, "pass --store URI"},
		{"not loopback", []string{"ui", "--store", "x.omni", "--listen", "0.0.0.0:0"}, "only on loopback"},
		{"lan address", []string{"ui", "--store", "x.omni", "--listen", "192.0.2.1:80"}, "only on loopback"},
		{"no port", []string{"ui", "--store", "x.omni", "--listen", "127.0.0.1"}, "--listen"},
		{"positional", []string{"ui", "x.omni"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestUIServes starts `omnigraph ui` on a local graph, reads the printed
// URL, loads the console and calls the API without a token, then stops it
// by cancelling its context.
func TestUIServes(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "social.omni")
	schema := writeFile(t, dir, "s.pg", fixture.SocialSchema)
	data := writeFile(t, dir, "d.jsonl", fixture.SocialData)
	for _, args := range [][]string{{"init", "--schema", schema, store}, {"load", "--data", data, "--mode", "overwrite", store}} {
		if code, _, errOut := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, []string{"ui", "--store", store}, &IO{In: strings.NewReader(""), Out: pw, Err: io.Discard})
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	_, url, ok := strings.Cut(strings.TrimSpace(line), ": ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/ui/") {
		t.Fatalf("printed %q", line)
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("GET %s = %d", url, res.StatusCode)
	}
	res, err = http.Get(strings.TrimSuffix(url, "/ui/") + "/graphs")
	if err != nil {
		t.Fatal(err)
	}
	var graphs struct {
		Graphs []struct {
			ID string `json:"graph_id"`
		} `json:"graphs"`
	}
	err = json.NewDecoder(res.Body).Decode(&graphs)
	res.Body.Close()
	if err != nil || len(graphs.Graphs) != 1 || graphs.Graphs[0].ID != "social" {
		t.Fatalf("graphs = %+v, %v", graphs, err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after cancel", code)
	}
}
