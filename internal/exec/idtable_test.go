package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIDTableMatchesMap pins the id table against a Go map over puts,
// inserts (which keep a held id's position), re-puts of held ids, growth
// from the smallest size and misses, for ids that are empty, share long
// prefixes, hold NUL bytes or differ in length only.
func TestIDTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := map[string]func() string{
		"keys":        func() string { return fmt.Sprintf("p%d", rng.IntN(5000)) },
		"ulids":       func() string { return fmt.Sprintf("01JQZX%020d", rng.IntN(5000)) },
		"odd-bytes":   func() string { return [...]string{"", "\x00", "\x00\x00", "a", "é", "\xff\xfe"}[rng.IntN(6)] },
		"long":        func() string { return fmt.Sprintf("%0300d", rng.IntN(3000)) },
		"prefix-runs": func() string { return "k" + string(make([]byte, rng.IntN(40))) },
	}
	for name, gen := range cases {
		t.Run(name, func(t *testing.T) {
			want := map[string]int{}
			tab := newIDTable(0)
			for i := range 20000 {
				id := gen()
				switch rng.IntN(3) {
				case 1:
					want[id] = i
					tab.put(id, i)
				case 2:
					// insert keeps a held id's position and reports it.
					held, had := want[id]
					got, ok := tab.insert(id, i)
					if !had {
						want[id], held = i, i
					}
					if ok != had || got != held {
						t.Fatalf("insert(%q, %d) = %d, %v; want %d, %v", id, i, got, ok, held, had)
					}
				}
				probe := gen()
				got, ok := tab.get(probe)
				w, wok := want[probe]
				if ok != wok || got != w {
					t.Fatalf("after %d ops get(%q) = %d, %v; want %d, %v", i, probe, got, ok, w, wok)
				}
			}
			if tab.n != len(want) {
				t.Fatalf("n = %d, want %d", tab.n, len(want))
			}
			for id, w := range want {
				if got, ok := tab.get(id); !ok || got != w {
					t.Fatalf("get(%q) = %d, %v; want %d", id, got, ok, w)
				}
			}
		})
	}
}

// BenchmarkEndpointLookup measures the lean-edge endpoint check of a
// bulk load: random hits among 1M staged node ids, the id table against
// the Go map it replaced (the ratio is the figure: same run). Each probe
// depends on the previous result, as in a load, where much other work
// sits between two lookups and their cache misses cannot overlap.
func BenchmarkEndpointLookup(b *testing.B) {
	const n = 1_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i)
	}
	probes := make([]string, 1<<16)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range probes {
		probes[i] = ids[rng.IntN(n)]
	}
	b.Run("map", func(b *testing.B) {
		m := map[string]int{}
		for i, id := range ids {
			m[id] = i
		}
		b.ResetTimer()
		p := 0
		for i := 0; b.Loop(); i++ {
			var ok bool
			if p, ok = m[probes[(i+p)&(len(probes)-1)]]; !ok {
				b.Fatal("miss")
			}
		}
	})
	b.Run("idtable", func(b *testing.B) {
		tab := newIDTable(0)
		for i, id := range ids {
			tab.put(id, i)
		}
		b.ResetTimer()
		p := 0
		for i := 0; b.Loop(); i++ {
			var ok bool
			if p, ok = tab.get(probes[(i+p)&(len(probes)-1)]); !ok {
				b.Fatal("miss")
			}
		}
	})
}
