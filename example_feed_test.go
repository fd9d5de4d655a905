package omnigraph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

// A change-feed consumer: take a baseline, then poll with the cursor it
// returns, applying each commit's changes to a local copy. The consumer
// stores the cursor after each poll it processed; a restarted consumer
// resumes from it and sees every later commit exactly once. The same flow
// on the command line is `omnigraph changes baseline --out F` then
// `omnigraph changes poll --cursor C` (docs/change-feed.md).
func ExampleGraph_PollChanges() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "omnigraph-feed-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	g, err := omnigraph.Init(ctx, filepath.Join(dir, "g.omni"), "schema.pg", exampleSchema, "", omnigraph.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(exampleData), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		log.Fatal(err)
	}

	// 1. Baseline: the branch's state now, and where to resume.
	people := map[string]string{} // name → age, the consumer's copy of Person
	var snap bytes.Buffer
	base, err := g.CaptureBaseline(ctx, "main", omnigraph.ChangeScope{Types: []string{"Person"}}, &snap)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(snap.String()), "\n") {
		var rec struct{ Data map[string]any }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			log.Fatal(err)
		}
		people[rec.Data["name"].(string)] = fmt.Sprint(rec.Data["age"])
	}
	cursor := base.ResumeCursor // persist this

	// 2. Writers go on.
	if _, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Carol","age":41}}`), omnigraph.LoadOptions{Mode: omnigraph.Append}); err != nil {
		log.Fatal(err)
	}
	if _, _, err := g.Mutate(ctx, "main", `query q() { update Person set { age: 26 } where name = "Bob" }`, "", nil, omnigraph.MutateOptions{}); err != nil {
		log.Fatal(err)
	}

	// 3. Poll until caught up, applying each block, then store the cursor.
	scope := omnigraph.ChangeScope{Types: []string{"Person"}}
	token := ""
	for {
		req := omnigraph.FeedRequest{Cursor: cursor, Scope: scope}
		if token != "" {
			// The previous page ended inside a commit: continue it (its
			// cause is repeated with the remaining changes).
			req = omnigraph.FeedRequest{PageToken: token, Scope: scope}
		}
		page, err := g.PollChanges(ctx, req)
		if err != nil {
			log.Fatal(err) // a *ChangeFeedGapError means: take a new baseline
		}
		for _, b := range page.Blocks {
			for _, c := range b.Changes {
				fmt.Println(c.Op, c.Type, c.ID)
				if c.Op == "delete" {
					delete(people, c.ID)
				} else {
					people[c.ID] = string(c.After["age"].(json.RawMessage))
				}
			}
		}
		if token = page.PageToken; token != "" {
			continue
		}
		cursor = page.Cursor // persist this
		if page.CaughtUp {
			break
		}
	}
	fmt.Println(people)
	// Output:
	// insert Person Carol
	// update Person Bob
	// map[Alice:30 Bob:26 Carol:41]
}
