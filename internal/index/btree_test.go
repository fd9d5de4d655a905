package index

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

var rewriteGolden = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// bruteMatch is the reference: the offsets whose non-null value
// satisfies every condition, compared as the query compares them.
func bruteMatch(vals []any, conds []BTreeCond) []int64 {
	var out []int64
	for r, v := range vals {
		if v == nil {
			continue
		}
		keep := true
		for _, c := range conds {
			if !refHolds(v, c) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, int64(r))
		}
	}
	return out
}

// refHolds compares v with c.Value exactly (integers by value, whatever
// their Go type; strings bytewise; false < true).
func refHolds(v any, c BTreeCond) bool {
	var x int
	switch a := v.(type) {
	case string:
		x = strings.Compare(a, c.Value.(string))
	case bool:
		b := c.Value.(bool)
		x = boolCmp(a, b)
	default:
		x = bigCmp(v, c.Value)
	}
	switch c.Op {
	case BTreeEq:
		return x == 0
	case BTreeLt:
		return x < 0
	case BTreeLe:
		return x <= 0
	case BTreeGt:
		return x > 0
	}
	return x >= 0
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// bigCmp compares two integers of any of the Go integer types exactly.
func bigCmp(a, b any) int {
	sign := func(v any) (neg bool, mag uint64) {
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return true, uint64(-(x + 1)) + 1
			}
			return false, uint64(x)
		case int32:
			return sign64(int64(x))
		case uint32:
			return false, uint64(x)
		case uint64:
			return false, x
		}
		panic(fmt.Sprintf("%T", v))
	}
	an, am := sign(a)
	bn, bm := sign(b)
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case an:
		return -cmpU(am, bm)
	}
	return cmpU(am, bm)
}

func sign64(x int64) (bool, uint64) {
	if x < 0 {
		return true, uint64(-(x + 1)) + 1
	}
	return false, uint64(x)
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// btColumn is n random values of kind k with about one null in nulls
// (0: none), drawn from card distinct values.
func btColumn(r *rand.Rand, k table.Kind, n, card, nulls int) []any {
	vals := make([]any, n)
	for i := range vals {
		if nulls > 0 && r.IntN(nulls) == 0 {
			continue
		}
		x := r.IntN(card)
		switch k {
		case table.I32:
			vals[i] = int32(x - card/2)
		case table.I64:
			vals[i] = int64(x-card/2) * 1_000_003
		case table.Date:
			vals[i] = int32(x)
		case table.DateTime:
			vals[i] = int64(x) * 86_400_000
		case table.U32:
			vals[i] = uint32(x)
		case table.U64:
			vals[i] = uint64(x) << 40
		case table.Bool:
			vals[i] = x%2 == 0
		case table.String, table.Enum:
			vals[i] = fmt.Sprintf("v%03d-%s", x, strings.Repeat("x", x%7))
		}
	}
	return vals
}

// btConst draws a constant of a type the query may compare a column of
// kind k with: sometimes one of the column's values, sometimes outside
// the domain (negative for unsigned, huge for signed).
func btConst(r *rand.Rand, k table.Kind, vals []any) any {
	if r.IntN(4) > 0 {
		if v := vals[r.IntN(len(vals))]; v != nil {
			switch x := v.(type) {
			case int32:
				return int64(x)
			case uint32:
				return int64(x)
			case uint64:
				if r.IntN(2) == 0 {
					return x
				}
				return int64(x)
			}
			return v
		}
	}
	switch k {
	case table.String, table.Enum:
		return fmt.Sprintf("v%03d", r.IntN(300))
	case table.Bool:
		return r.IntN(2) == 0
	case table.U32, table.U64:
		return []any{int64(-1), int64(math.MinInt64), uint64(math.MaxUint64), int64(r.IntN(300))}[r.IntN(4)]
	}
	return []any{int64(math.MinInt64), int64(math.MaxInt64), uint64(math.MaxUint64), int64(r.IntN(300) - 150)}[r.IntN(4)]
}

// TestBTreeMatchesScan compares every lookup of random indexes (every
// indexable kind, nulls, few and many distinct values, one and several
// blocks) with a row-by-row comparison, through ranged reads.
func TestBTreeMatchesScan(t *testing.T) {
	ctx := context.Background()
	kinds := []table.Kind{table.I32, table.I64, table.U32, table.U64, table.Date, table.DateTime, table.Bool, table.String, table.Enum}
	for _, k := range kinds {
		for _, shape := range []struct{ n, card, nulls int }{{0, 1, 0}, {1, 1, 0}, {50, 3, 5}, {5000, 40, 9}, {40000, 3000, 20}, {20000, 20000, 0}} {
			t.Run(fmt.Sprintf("%s/%d/%d", k, shape.n, shape.card), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(k), uint64(shape.n)))
				vals := btColumn(r, k, shape.n, shape.card, shape.nulls)
				obj, err := BuildBTree(k, vals)
				if err != nil {
					t.Fatal(err)
				}
				mem := memWith(t, "t/index/a.btr", obj)
				s, err := OpenBTree(ctx, mem, "t/index/a.btr")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := VerifyBTree("t/index/a.btr", obj); err != nil {
					t.Fatal(err)
				}
				if s.Rows() != shape.n {
					t.Fatalf("rows %d", s.Rows())
				}
				if shape.n == 0 {
					vals = []any{nil}
				}
				for q := range 60 {
					conds := make([]BTreeCond, 1+r.IntN(2))
					for i := range conds {
						conds[i] = BTreeCond{Op: BTreeOp(1 + r.IntN(5)), Value: btConst(r, k, vals)}
					}
					got, ok, err := s.Match(ctx, conds)
					if err != nil || !ok {
						t.Fatalf("query %d %v: ok %v err %v", q, conds, ok, err)
					}
					if want := bruteMatch(vals, conds); !slices.Equal(got, want) {
						t.Fatalf("query %d %v: %d rows, want %d", q, conds, len(got), len(want))
					}
				}
			})
		}
	}
}

// TestBTreeRanged pins the cost of a lookup: the front (one ranged read
// of BTreeFrontBytes, and one more for the rest of a long directory),
// then one ranged read of the blocks an equality's value falls in, a
// small part of the object.
func TestBTreeRanged(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	vals := btColumn(r, table.I32, 1<<20, 80, 0)
	obj, err := BuildBTree(table.I32, vals)
	if err != nil {
		t.Fatal(err)
	}
	mem := memWith(t, "t/index/a.btr", obj)
	cnt := storage.NewCounting(mem)
	s, err := OpenBTree(ctx, cnt, "t/index/a.btr")
	if err != nil {
		t.Fatal(err)
	}
	if c := cnt.Snapshot(); c.Requests() > 2 || c[storage.OpGetRange].Bytes != s.FrontBytes() || s.FrontBytes()*50 > int64(len(obj)) {
		t.Fatalf("open: %v, front %d of %d bytes", c, s.FrontBytes(), len(obj))
	}
	cnt.Reset()
	got, _, err := s.Match(ctx, []BTreeCond{{BTreeEq, int64(-9)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := bruteMatch(vals, []BTreeCond{{BTreeEq, int64(-9)}}); !slices.Equal(got, want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	c := cnt.Snapshot()
	// One run of ~13k offsets (about a byte each) and its block's
	// neighbours at most: well under 1/40 of the object.
	if c.Requests() != 1 || c[storage.OpGetRange].Bytes*40 > int64(len(obj)) {
		t.Fatalf("equality read %v of a %d-byte object", c, len(obj))
	}
	t.Logf("object %d bytes, equality of %d rows read %d bytes", len(obj), len(got), c[storage.OpGetRange].Bytes)
}

// TestBTreeGolden pins the byte layout of a small index (one block per
// kind class) against testdata/btree_v1_*.hex; -rewrite regenerates it.
func TestBTreeGolden(t *testing.T) {
	cases := []struct {
		name string
		k    table.Kind
		vals []any
	}{
		{"i64", table.I64, []any{int64(5), nil, int64(-2), int64(5), int64(7), int64(-2)}},
		{"u32", table.U32, []any{uint32(3), uint32(1), nil, uint32(3)}},
		{"string", table.String, []any{"city", "cat", nil, "city", "dog"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := BuildBTree(tc.k, tc.vals)
			if err != nil {
				t.Fatal(err)
			}
			path := "testdata/btree_v1_" + tc.name + ".hex"
			got := hex.EncodeToString(obj) + "\n"
			if *rewriteGolden {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("%s changed:\n got %s\nwant %s", path, got, want)
			}
			// The golden object still answers.
			b, _ := hex.DecodeString(strings.TrimSpace(string(want)))
			s, err := VerifyBTree(path, b)
			if err != nil {
				t.Fatal(err)
			}
			c := BTreeCond{BTreeEq, tc.vals[0]}
			if _, isU := tc.vals[0].(uint32); isU {
				c.Value = uint64(tc.vals[0].(uint32))
			}
			offs, _, err := s.Match(context.Background(), []BTreeCond{c})
			if err != nil || len(offs) != 2 || offs[0] != 0 {
				t.Fatalf("golden lookup %v: %v %v", c, offs, err)
			}
		})
	}
}

// TestBTreeCorrupt: every flipped byte and every truncation of an
// object is a typed error (CorruptError or VersionError) on open or on
// the lookup that reads it, never a panic or a wrong answer.
func TestBTreeCorrupt(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	vals := btColumn(r, table.String, 3000, 200, 10)
	obj, err := BuildBTree(table.String, vals)
	if err != nil {
		t.Fatal(err)
	}
	all := []BTreeCond{{BTreeGe, ""}}
	want := bruteMatch(vals, all)
	typed := func(err error) bool {
		var ce *table.CorruptError
		var ve *table.VersionError
		return errors.As(err, &ce) || errors.As(err, &ve)
	}
	try := func(name string, b []byte) {
		mem := memWith(t, "t/index/x.btr", b)
		s, err := OpenBTree(ctx, mem, "t/index/x.btr")
		if err == nil {
			var got []int64
			got, _, err = s.Match(ctx, all)
			if err == nil {
				if !slices.Equal(got, want) {
					t.Fatalf("%s: wrong answer without an error", name)
				}
				return
			}
		}
		if !typed(err) {
			t.Fatalf("%s: untyped error %v", name, err)
		}
	}
	for i := 0; i < len(obj); i += 1 + i/64 {
		b := slices.Clone(obj)
		b[i] ^= 0x5a
		try(fmt.Sprintf("flip %d", i), b)
	}
	for _, n := range []int{0, 3, 8, btHead - 1, btHead, btHead + 10, len(obj) / 2, len(obj) - 1} {
		try(fmt.Sprintf("truncate %d", n), obj[:n])
	}
	b := slices.Clone(obj)
	b[4] = 9
	mem := memWith(t, "t/index/v.btr", b)
	var ve *table.VersionError
	if _, err := OpenBTree(ctx, mem, "t/index/v.btr"); !errors.As(err, &ve) || ve.Got != 9 {
		t.Fatalf("version 9: %v", err)
	}
	if _, err := BuildBTree(table.F64, []any{1.5}); !errors.Is(err, table.ErrSchema) {
		t.Fatalf("float column: %v", err)
	}
	if _, err := BuildBTree(table.I64, []any{"x"}); !errors.Is(err, table.ErrSchema) {
		t.Fatalf("mistyped value: %v", err)
	}
}

// TestBTreeEstimate: the directory's estimate bounds Match's answer from
// above and is exact when the matched values fill whole blocks.
func TestBTreeEstimate(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	vals := btColumn(r, table.I64, 30000, 500, 10)
	obj, err := BuildBTree(table.I64, vals)
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeBTree("x.btr", obj)
	if err != nil {
		t.Fatal(err)
	}
	for q := range 200 {
		conds := []BTreeCond{{BTreeOp(1 + r.IntN(5)), btConst(r, table.I64, vals)}}
		est, _, ok := s.Estimate(conds)
		got, ok2, err := s.Match(ctx, conds)
		if err != nil || !ok || !ok2 || est < len(got) {
			t.Fatalf("query %d %v: estimate %d, match %d (%v)", q, conds, est, len(got), err)
		}
	}
	if est, _, _ := s.Estimate([]BTreeCond{{BTreeGe, int64(math.MinInt64)}}); est != len(bruteMatch(vals, []BTreeCond{{BTreeGe, int64(math.MinInt64)}})) {
		t.Fatalf("whole-range estimate %d", est)
	}
}
