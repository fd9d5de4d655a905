package storagetest

import "testing"

// TestCheckChain: the race checker itself rejects every anomaly it exists to catch.
func TestCheckChain(t *testing.T) {
	good := []string{"a:0", "b:0", "a:1", "b:1"}
	goodWon := map[string][]int{"a": {0, 2}, "b": {1, 3}}
	tests := []struct {
		name    string
		chain   []string
		won     map[string][]int
		wantErr bool
	}{
		{"valid", good, goodWon, false},
		{"two winners of one round", good, map[string][]int{"a": {0, 2}, "b": {2, 3}}, true},
		{"lost update", []string{"a:0", "b:0", "a:1"}, goodWon, true},
		{"phantom entry", append(good, "c:0"), goodWon, true},
		{"writer out of order", []string{"a:1", "b:0", "a:0", "b:1"}, goodWon, true},
		{"entry not by round winner", []string{"b:0", "a:0", "a:1", "b:1"}, goodWon, true},
		{"duplicate entry", []string{"a:0", "b:0", "a:0", "b:1"}, goodWon, true},
		{"short worker", good, map[string][]int{"a": {0, 2}, "b": {1}}, true},
		{"malformed", []string{"a0", "b:0", "a:1", "b:1"}, goodWon, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckChain(tc.chain, tc.won, 2)
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckChain err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	if got := ParseChain([]byte("x:0\ny:0\n")); len(got) != 2 || got[1] != "y:0" {
		t.Fatalf("ParseChain = %q", got)
	}
	if got := ParseChain(nil); len(got) != 0 {
		t.Fatalf("ParseChain(nil) = %q", got)
	}
}
