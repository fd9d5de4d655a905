package omnigraph_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

const exampleSchema = `
node Person { name: String @key  age: I32? }
node Company { name: String @key }
edge Knows: Person -> Person
edge WorksAt: Person -> Company
`

const exampleData = `{"type":"Person","data":{"name":"Alice","age":30}}
{"type":"Person","data":{"name":"Bob","age":25}}
{"type":"Company","data":{"name":"Acme"}}
{"edge":"Knows","from":"Alice","to":"Bob"}
{"edge":"WorksAt","from":"Alice","to":"Acme"}
`

// Create a graph in a directory, load data, and query it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "omnigraph-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "social.omni")

	g, err := omnigraph.Init(ctx, uri, "schema.pg", exampleSchema, "", omnigraph.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(exampleData), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		log.Fatal(err)
	}
	res, err := g.Query(ctx, omnigraph.Target{}, `
query friends($name: String) {
    match { $p: Person { name: $name }  $p knows $f }
    return { $f.name, $f.age }
}`, "", map[string]any{"name": "Alice"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns)
	for _, row := range res.Rows {
		fmt.Println(row...)
	}
	// Output:
	// [f.name f.age]
	// Bob 25
}

// Mutations apply atomically as one commit; the previous commit stays
// readable (time travel).
func ExampleGraph_Mutate() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "omnigraph-example-")
	defer os.RemoveAll(dir)
	g, err := omnigraph.Init(ctx, filepath.Join(dir, "g"), "schema.pg", exampleSchema, "", omnigraph.Options{})
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := g.Load(ctx, strings.NewReader(exampleData), omnigraph.LoadOptions{Mode: omnigraph.Overwrite})
	if err != nil {
		log.Fatal(err)
	}
	res, _, err := g.Mutate(ctx, "main", `
query set_age($name: String, $age: I32) {
    update Person set { age: $age } where name = $name
}`, "", map[string]any{"name": "Bob", "age": 26}, omnigraph.MutateOptions{Actor: "docs"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("affected nodes:", res.AffectedNodes)

	ages := `query age($name: String) { match { $p: Person { name: $name } } return { $p.age } }`
	now, _ := g.Query(ctx, omnigraph.Target{}, ages, "", map[string]any{"name": "Bob"})
	then, _ := g.Query(ctx, omnigraph.Target{Snapshot: loaded.Commit.ID}, ages, "", map[string]any{"name": "Bob"})
	fmt.Println("now:", now.Rows[0][0], "before:", then.Rows[0][0])
	// Output:
	// affected nodes: 1
	// now: 26 before: 25
}
