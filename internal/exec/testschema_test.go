package exec

import (
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// testSchema exercises every type and constraint the write path checks.
const testSchema = `
node Person {
    name: String @key
    age: I32?
    email: String? @unique
    role: enum(guest, admin, user)?
    handle: String?
    @range(age, 0..150)
    @check(handle, "^[a-z]+")
}

node Company {
    name: String @key
    size: U32?
    rating: F64?
    @range(rating, ..5)
}

node Doc {
    title: String
    slug: String?
    embedding: Vector(3)?
    tags: [String]?
    born: Date?
    at: DateTime?
    blob: Blob?
    weight: F32?
    big: I64?
    @unique(slug)
}

node Pair {
    last: String
    first: String
    born: Date?
    @key(last, first)
    @unique(last, born)
}

edge Knows: Person -> Person {
    since: Date?
    @unique(src, dst)
}

edge WorksAt: Person -> Company @card(0..1) {
    title: String?
}

edge Wrote: Person -> Doc @card(1..2)
`

func testCatalog(t testing.TB) *schema.Catalog {
	t.Helper()
	cat, err := schema.Compile("test.pg", testSchema)
	return must(t, cat, err)
}

func TestTestSchemaShape(t *testing.T) {
	cat := testCatalog(t)
	c, _ := cat.Node("Company")
	if len(c.Ranges) != 1 || c.Ranges[0].Min != nil || c.Ranges[0].Max == nil || *c.Ranges[0].Max != 5 {
		t.Fatalf("Company @range(rating, ..5) compiled as %+v; want max 5 (our deviation from upstream)", c.Ranges)
	}
	p, _ := cat.Node("Pair")
	if len(p.Key) != 2 {
		t.Fatalf("Pair key %v", p.Key)
	}
}
