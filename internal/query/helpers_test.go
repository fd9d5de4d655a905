package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// testSchema is the spec §8 fixture (fixture.SocialSchema) plus extra types
// exercising the remaining type rules (enums, lists, vectors, blobs,
// interfaces, search).
const testSchema = fixture.SocialSchema + `
interface Named { label: String }
node Thing implements Named {
    code: String @key
    status: enum(active, inactive)?
    tags: [String]?
    scores: [I64]?
    photo: Blob?
    emb: Vector(3)?
    born: Date?
    seen: DateTime?
    ratio: F64?
    flag: Bool?
    text: String?
    auto: Vector(3) @embed(text)
}
edge Owns: Person -> Thing { weight: F64? }
node Doc {
    slug: String @key
    title: String @index
    body: String @index
    embedding: Vector(4)
}
`

func testCatalog(tb testing.TB) *schema.Catalog {
	tb.Helper()
	cat, err := schema.Compile("test.pg", testSchema)
	if err != nil {
		tb.Fatalf("test schema: %v", err)
	}
	return cat
}

// compileErr compiles src and returns the error text ("" when it compiles).
func compileErr(tb testing.TB, cat *schema.Catalog, src string) string {
	tb.Helper()
	_, err := Compile(cat, "q.gq", src)
	if err == nil {
		return ""
	}
	var list ErrorList
	if !errors.As(err, &list) {
		tb.Fatalf("error is not an ErrorList: %T %v", err, err)
	}
	msgs := make([]string, len(list))
	for i, e := range list {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}
