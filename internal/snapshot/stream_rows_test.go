package snapshot

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// TestBatchAppendExportMatchesValue pins the typed export fast path to the
// boxed one, byte for byte, for every column kind it takes (and a few it
// hands to the boxed path), nulls and edge values included.
func TestBatchAppendExportMatchesValue(t *testing.T) {
	mem := memory.NewGoAllocator()
	str := array.NewStringBuilder(mem)
	str.AppendValues([]string{"", "plain", "q\"\\\n\x01", "héllo ✓", "bad\xff"}, nil)
	str.AppendNull()
	i32 := array.NewInt32Builder(mem)
	i32.AppendValues([]int32{0, -1, math.MaxInt32, math.MinInt32, 7}, nil)
	i32.AppendNull()
	i64 := array.NewInt64Builder(mem)
	i64.AppendValues([]int64{0, -1, math.MaxInt64, math.MinInt64, 1 << 53}, nil)
	i64.AppendNull()
	bl := array.NewBooleanBuilder(mem)
	bl.AppendValues([]bool{true, false, true, false, true}, nil)
	bl.AppendNull()
	f64 := array.NewFloat64Builder(mem)
	f64.AppendValues([]float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(-1), 1e21, 0.1}, nil)
	f32 := array.NewFloat32Builder(mem)
	f32.AppendValues([]float32{0.1, 3, float32(math.Inf(1))}, nil)
	f32.AppendNull()
	f32.AppendValues([]float32{-2.5, 1e-7}, nil)
	d32 := array.NewDate32Builder(mem)
	d32.AppendValues([]arrow.Date32{0, 19000, -1, 1, 2}, nil)
	d32.AppendNull()
	cols := []struct {
		kind schema.Kind
		arr  arrow.Array
	}{
		{schema.KindString, str.NewArray()},
		{schema.KindEnum, mustReuse(t, str)},
		{schema.KindI32, i32.NewArray()},
		{schema.KindI64, i64.NewArray()},
		{schema.KindBool, bl.NewArray()},
		{schema.KindF64, f64.NewArray()},
		{schema.KindF32, f32.NewArray()},
		{schema.KindDate, d32.NewArray()},
	}
	b := &Batch{n: 6}
	for _, c := range cols {
		b.props = append(b.props, &schema.Property{Name: c.kind.String(), Type: schema.Type{Kind: c.kind}})
		b.arrs = append(b.arrs, c.arr)
	}
	b.props = append(b.props, &schema.Property{Name: "absent", Type: schema.Type{Kind: schema.KindString}})
	b.arrs = append(b.arrs, nil)
	fast := 0
	for k, p := range b.props {
		for i := range b.n {
			got, ok, err := b.AppendExport([]byte("x"), i, k)
			if err != nil {
				t.Fatalf("%s row %d: %v", p.Name, i, err)
			}
			v := b.Value(i, k)
			if !ok {
				if v != nil || string(got) != "x" {
					t.Fatalf("%s row %d: reported null for %#v (dst %q)", p.Name, i, v, got)
				}
				continue
			}
			want, err := value.AppendExportJSON([]byte("x"), p.Type, v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("%s row %d: fast %s, boxed %s", p.Name, i, got, want)
			}
			fast++
		}
	}
	if fast < 30 {
		t.Fatalf("only %d non-null cells compared", fast)
	}
}

// mustReuse builds a second array of the strings builder's values (a
// builder is empty after NewArray).
func mustReuse(t *testing.T, b *array.StringBuilder) arrow.Array {
	t.Helper()
	b.AppendValues([]string{"Active", "a\tb", "", "Ω", "x"}, nil)
	b.AppendNull()
	return b.NewArray()
}
