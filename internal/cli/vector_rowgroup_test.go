package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestVectorsPastFirstRowGroup is the reproduction of the data-corruption bug
// where vectors past the first Parquet row group (65,536 rows) of a compacted
// fragment held other rows' values. Every exported vector must carry its own
// row number in element 0: after the load (several chunks, compacted
// automatically), after optimize, after a merge that adopts the fragments, and
// after keyed updates of rows in the second row group. Exact k-NN recall over
// the loaded vectors must be 1.0.
func TestVectorsPastFirstRowGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 128-dimensional vectors")
	}
	const n, dim = 100000, 128
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", "node Doc { slug: String @key  v: Vector(128) }\n")
	r := rand.New(rand.NewPCG(3, 3))
	vecs := make([][]float32, n)
	var data bytes.Buffer
	for i := range vecs {
		v := make([]float32, dim)
		v[0] = float32(i)
		for j := 1; j < dim; j++ {
			v[j] = float32(r.IntN(1024)) / 1024
		}
		vecs[i] = v
		b, _ := json.Marshal(map[string]any{"type": "Doc", "data": map[string]any{"slug": fmt.Sprintf("d%d", i), "v": v}})
		data.Write(b)
		data.WriteByte('\n')
	}
	dataPath := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(dataPath, data.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(dir, "g.omni")
	mustRun(t, "init", "--schema", schema, g, "--json")
	// Load onto a branch so that main later adopts its fragments by merge.
	mustRun(t, "branch", "create", "--store", g, "--from", "main", "side", "--json")
	mustRun(t, "load", "--data", dataPath, "--mode", "overwrite", "--branch", "side", g, "--json", "--quiet")

	updated := map[int][]float32{}
	check := func(stage, branch string) {
		t.Helper()
		res := runBin(t, "export", "--store", g, "--branch", branch)
		if res.code != 0 {
			t.Fatalf("%s: export exit %d: %s", stage, res.code, res.stderr)
		}
		sc := bufio.NewScanner(strings.NewReader(res.stdout))
		sc.Buffer(nil, 1<<20)
		rows, bad := 0, []int{}
		for sc.Scan() {
			var rec struct {
				Data struct {
					Slug string    `json:"slug"`
					V    []float32 `json:"v"`
				} `json:"data"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
			rows++
			i, err := strconv.Atoi(strings.TrimPrefix(rec.Data.Slug, "d"))
			if err != nil {
				t.Fatalf("%s: slug %q", stage, rec.Data.Slug)
			}
			want := vecs[i]
			if u, ok := updated[i]; ok {
				want = u
			}
			if !slices.Equal(rec.Data.V, want) {
				bad = append(bad, i)
			}
		}
		if rows != n {
			t.Fatalf("%s: exported %d rows, want %d", stage, rows, n)
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			t.Fatalf("%s: %d rows hold wrong vectors, first %v", stage, len(bad), bad[:min(3, len(bad))])
		}
	}
	check("load", "side")
	mustRun(t, "branch", "merge", "side", "--into", "main", "--store", g, "--json")
	check("merge", "main")
	mustRun(t, "optimize", "--store", g, "--json")
	check("optimize", "main")

	upd := writeFile(t, dir, "u.gq", "query setv($slug: String, $v: Vector(128)) { update Doc set { v: $v } where slug = $slug }\n")
	for _, i := range []int{65535, 65536, 68000, 99999} {
		v := make([]float32, dim)
		v[0] = float32(i)
		v[1] = -1
		b, _ := json.Marshal(map[string]any{"slug": fmt.Sprintf("d%d", i), "v": v})
		mustRun(t, "mutate", "setv", "--query", upd, "--params", string(b), "--store", g, "--json")
		updated[i] = v
	}
	check("keyed update", "main")

	// Exact k-NN: the ten nearest by L2 to a query equal brute force.
	q := make([]float32, dim)
	q[0] = 70000.3
	for j := 1; j < dim; j++ {
		q[j] = 0.5
	}
	knn := writeFile(t, dir, "k.gq", "query knn($q: Vector(128)) { match { $d: Doc } return { $d.slug } order { nearest($d.v, $q) } limit 10 }\n")
	qb, _ := json.Marshal(map[string]any{"q": q})
	out := mustRun(t, "query", "knn", "--query", knn, "--params", string(qb), "--store", g, "--json")
	var got []string
	for _, row := range rowsOf(t, out) {
		got = append(got, row["d.slug"].(string))
	}
	type cand struct {
		i int
		d float64
	}
	all := make([]cand, n)
	for i, v := range vecs {
		if u, ok := updated[i]; ok {
			v = u
		}
		var d float64
		for j := range v {
			x := float64(v[j]) - float64(q[j])
			d += x * x
		}
		all[i] = cand{i, d}
	}
	slices.SortStableFunc(all, func(a, b cand) int {
		if a.d < b.d {
			return -1
		}
		if a.d > b.d {
			return 1
		}
		return 0
	})
	hits := 0
	for _, c := range all[:10] {
		if slices.Contains(got, fmt.Sprintf("d%d", c.i)) {
			hits++
		}
	}
	if hits != 10 {
		t.Fatalf("exact k-NN recall %d/10: got %v", hits, got)
	}
}
