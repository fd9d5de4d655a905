package exec

import (
	"strconv"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// fastBenchSchema is the benchmark graph's schema (one typed node type,
// a property-less edge) plus an edge with data.
const fastBenchSchema = `
node Person { name: String @key  age: I32?  city: String?  bio: String? }
edge Knows: Person -> Person
edge Rated: Person -> Person { score: F64?  note: String? }
`

// benchParseLines runs parseLine over lines as a parse worker does (alias
// reader, record and cell arenas per block); one op is one line.
func benchParseLines(b *testing.B, lines [][]byte) {
	cat, err := schema.Compile("bench.pg", fastBenchSchema)
	if err != nil {
		b.Fatal(err)
	}
	r := aliasReader(cat)
	nodes := make([]NodeRecord, 0, len(lines))
	edges := make([]EdgeRecord, 0, len(lines))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(lines) {
			i = 0
			r.nodes, r.edges = nodes[:0], edges[:0]
		}
		if _, err := r.parseLine(lines[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func benchLines(n int, line func(i int) string) [][]byte {
	text := make([]byte, 0, n*100)
	ends := make([]int, n)
	for i := range n {
		text = append(text, line(i)...)
		ends[i] = len(text)
	}
	lines := make([][]byte, n)
	start := 0
	for i, end := range ends {
		lines[i] = text[start:end:end]
		start = end
	}
	return lines
}

// BenchmarkParseNodeLine: the benchmark graph's node line.
func BenchmarkParseNodeLine(b *testing.B) {
	benchParseLines(b, benchLines(4096, func(i int) string {
		return `{"type":"Person","data":{"name":"p` + strconv.Itoa(i) + `","age":` + strconv.Itoa(i%100) +
			`,"city":"c` + strconv.Itoa(i%50) + `","bio":"graph agent memory"}}`
	}))
}

// BenchmarkParseEdgeLine: the benchmark graph's edge line.
func BenchmarkParseEdgeLine(b *testing.B) {
	benchParseLines(b, benchLines(4096, func(i int) string {
		return `{"edge":"Knows","from":"p` + strconv.Itoa(i) + `","to":"p` + strconv.Itoa(i*7%4096) + `"}`
	}))
}

// BenchmarkParseEdgeDataLine: an edge line with a flat data object.
func BenchmarkParseEdgeDataLine(b *testing.B) {
	benchParseLines(b, benchLines(4096, func(i int) string {
		return `{"edge":"Rated","from":"p` + strconv.Itoa(i) + `","to":"p` + strconv.Itoa(i*7%4096) +
			`","data":{"score":` + strconv.Itoa(i%5) + `.5,"note":"ok"}}`
	}))
}
