package policy

import (
	"errors"
	"testing"
)

// FuzzParse: any input is either rejected with ErrInvalid or parses into a
// file that compiles for its kind and decides any request without error.
func FuzzParse(f *testing.F) {
	f.Add([]byte(basePolicy))
	f.Add([]byte("version: 1\ngroups: {a: [x]}\nrules:\n  - id: r\n    allow: {actors: {group: a}, actions: [graph_list]}\n"))
	f.Add([]byte("version: 1\nrules: []\n"))
	f.Add([]byte("version: 1\ngroups: {a: [x]}\nrules:\n  - {id: r, allow: {actors: {group: a}, actions: [read], branch_scope: unprotected}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := Parse("fuzz", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		var b *Bundle
		if pf.Kind() == KindServer {
			b, err = CompileServer("fuzz", pf)
		} else {
			b, err = CompileGraph("fuzz", pf, "g")
		}
		if err != nil {
			t.Fatalf("parsed but did not compile: %v", err)
		}
		for _, actor := range append(pf.Actors(), "nobody") {
			for _, a := range Actions() {
				if _, err := b.Decide(Request{Actor: actor, Action: a, Branch: "main", TargetBranch: "dev"}); err != nil {
					t.Fatalf("decide %s %s: %v", actor, a, err)
				}
			}
		}
	})
}
