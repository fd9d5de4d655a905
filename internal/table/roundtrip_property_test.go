package table

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// propertySchema holds every column type the table layer stores, each both
// nullable and not, lists of every element kind and vectors of several
// dimensions.
func propertySchema() Schema {
	cols := []Column{{Name: KeyColumn, Type: ColumnType{Kind: String}}}
	add := func(name string, t ColumnType) {
		cols = append(cols, Column{Name: name, Type: t})
		t.Nullable = true
		cols = append(cols, Column{Name: name + "_n", Type: t})
	}
	for _, k := range []Kind{String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime, Blob, Enum} {
		add(k.String(), ColumnType{Kind: k})
	}
	for _, k := range []Kind{String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime} {
		add("list_"+k.String(), ColumnType{Kind: List, Elem: k})
	}
	for _, d := range []int{1, 3, 128} {
		add(fmt.Sprintf("vec%d", d), ColumnType{Kind: Vector, Dim: d})
	}
	return Schema{Columns: cols}
}

// randomValue draws a value of t in the canonical form Value returns.
func randomValue(r *rand.Rand, t ColumnType, row int) any {
	if t.Nullable && r.IntN(5) == 0 {
		return nil
	}
	switch t.Kind {
	case Vector:
		v := make([]float32, t.Dim)
		v[0] = float32(row) // the row number: a misplaced vector is visible at once
		for i := 1; i < t.Dim; i++ {
			v[i] = r.Float32()
		}
		return v
	case List:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randomScalar(r, t.Elem, row)
		}
		return out
	}
	return randomScalar(r, t.Kind, row)
}

func randomScalar(r *rand.Rand, k Kind, row int) any {
	switch k {
	case String:
		return fmt.Sprintf("s%d-%x", row, r.Uint32())
	case Enum:
		return []string{"red", "green", "blue"}[r.IntN(3)]
	case Bool:
		return r.IntN(2) == 0
	case I32:
		return int32(r.Uint32())
	case I64:
		return int64(r.Uint64())
	case U32:
		return r.Uint32()
	case U64:
		return r.Uint64()
	case F32:
		return float32(r.NormFloat64())
	case F64:
		return r.NormFloat64() * 1e6
	case Date:
		return int32(r.IntN(40000) - 20000)
	case DateTime:
		return int64(r.IntN(1<<40)) - 1<<39
	case Blob:
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	panic(fmt.Sprintf("no random value for %v", k))
}

func randomRows(seed uint64, schema Schema, n int) [][]any {
	r := rand.New(rand.NewPCG(seed, 1))
	rows := make([][]any, n)
	for i := range rows {
		row := make([]any, len(schema.Columns))
		row[0] = fmt.Sprintf("k%07d", i)
		for j := 1; j < len(row); j++ {
			row[j] = randomValue(r, schema.Columns[j].Type, i)
		}
		rows[i] = row
	}
	return rows
}

// sameValue compares two canonical values; NaN equals NaN.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb))
	}
	if fa, ok := a.(float32); ok {
		fb, ok := b.(float32)
		return ok && (fa == fb || fa != fa && fb != fb)
	}
	return reflect.DeepEqual(a, b)
}

// diffRows reports the first few mismatches between got and want.
func diffRows(t *testing.T, schema Schema, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		for j := range want[i] {
			if !sameValue(got[i][j], want[i][j]) {
				if bad++; bad <= 5 {
					t.Errorf("row %d column %s: got %s, want %s", i, schema.Columns[j].Name, short(got[i][j]), short(want[i][j]))
				}
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d mismatching values in all", bad)
	}
}

// TestRoundTripProperty writes random rows of every type at sizes that cross
// row-group boundaries, from whole records and from slices of a larger
// record (the shape compaction and chunked loads hand the writer), and reads
// them back through the scanner and ReadRows value by value.
func TestRoundTripProperty(t *testing.T) {
	schema := propertySchema()
	cases := []struct {
		name     string
		rows     int
		rowGroup int64
		sliceOff int // > 0: write rec[sliceOff:] of a record with sliceOff extra leading rows
	}{
		{"1 row", 1, 0, 0},
		{"one short of a row group", 999, 1000, 0},
		{"two past a row group", 1002, 1000, 0},
		{"several row groups", 3500, 1000, 0},
		{"sliced single row group", 700, 1000, 333},
		{"sliced across row groups", 2600, 1000, 777},
	}
	if !testing.Short() {
		cases = append(cases,
			struct {
				name     string
				rows     int
				rowGroup int64
				sliceOff int
			}{"default row groups 140000", 140000, 0, 0},
			struct {
				name     string
				rows     int
				rowGroup int64
				sliceOff int
			}{"default row groups sliced 65537", 65537, 0, 5},
		)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := checkedAlloc(t)
			st := storage.NewMem()
			all := randomRows(uint64(i+1), schema, tc.sliceOff+tc.rows)
			want := all[tc.sliceOff:]
			rec := buildRecord(t, mem, schema, all)
			defer rec.Release()
			part := rec.NewSlice(int64(tc.sliceOff), rec.NumRows())
			defer part.Release()
			f, err := WriteFragment(context.Background(), st, testPrefix, schema, part, WriteOptions{Alloc: mem, RowGroupRows: tc.rowGroup})
			if err != nil {
				t.Fatal(err)
			}
			s := stateOf(t, schema, f)
			got, _ := scanAll(t, st, s, ScanOptions{Alloc: mem})
			diffRows(t, schema, got, want)

			// ReadRows by offset: the last row of every row group and its
			// neighbour, the first and the last row.
			rg := tc.rowGroup
			if rg == 0 {
				rg = DefaultRowGroupRows
			}
			offs := []int64{0}
			for o := rg - 1; o+1 < int64(tc.rows); o += rg {
				offs = append(offs, o, o+1)
			}
			offs = append(offs, int64(tc.rows-1))
			offs = dedupSorted(offs)
			rr, err := ReadRows(context.Background(), st, s, f.Key, offs, nil, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			sub := make([][]any, len(offs))
			for k, o := range offs {
				sub[k] = want[o]
			}
			diffRows(t, schema, rowsOf(rr), sub)
		})
	}
}

func dedupSorted(s []int64) []int64 {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v > out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// short renders v for a failure message, cut to a readable length.
func short(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
