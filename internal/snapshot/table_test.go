package snapshot

import "testing"

func TestNodeTableIndex(t *testing.T) {
	nt := &NodeTable{IDs: []string{"a", "b", "c"}, Cols: map[string][]any{"x": {1, nil, 3}}}
	for i, id := range nt.IDs {
		r, ok := nt.Row(id)
		if !ok || r != i {
			t.Fatalf("Row(%q) = %d,%v", id, r, ok)
		}
	}
	if _, ok := nt.Row("zz"); ok {
		t.Fatal("Row of a missing id succeeded")
	}
	if nt.Value(1, "x") != nil || nt.Value(0, "nope") != nil {
		t.Fatal("Value null handling")
	}
}

func TestEdgeTableAdjacency(t *testing.T) {
	et := &EdgeTable{IDs: []string{"e1", "e2", "e3"}, Src: []string{"a", "a", "b"}, Dst: []string{"b", "c", "c"}}
	if got := et.Out("a"); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("Out(a) = %v", got)
	}
	if got := et.In("c"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("In(c) = %v", got)
	}
	if got := et.Out("c"); len(got) != 0 {
		t.Fatalf("Out(c) = %v", got)
	}
}
