package commit

import (
	"github.com/oklog/ulid/v2"

	"errors"
	"strings"
	"testing"
)

func mustID(t *testing.T, s string) ID {
	t.Helper()
	id, err := ParseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

const (
	idA = "01JGQ5Z8M0AAAAAAAAAAAAAAAA"
	idB = "01JGQ5Z8M0BBBBBBBBBBBBBBBB"
	idC = "01JGQ5Z8M0CCCCCCCCCCCCCCCC"
)

// goldenCommit pins the exact bytes of a commit object (docs/format/commit.md).
const goldenCommit = `{"format":1,"id":"01JGQ5Z8M0CCCCCCCCCCCCCCCC","parents":["01JGQ5Z8M0AAAAAAAAAAAAAAAA","01JGQ5Z8M0BBBBBBBBBBBBBBBB"],"height":7,"actor":"act-1","created_at":1767323045000000,"kind":"merge","message":"merge feature","schema":"schemas/0b1c.pg","tables":{"edge:Knows":"tables/edge:Knows/state/e1.json","node:Person":"tables/node:Person/state/p2.json"},"sum":"b32e2958a862a75cbafad404c4fe416863599a07befc07b181bdd6c244d89f7f"}` + "\n"

// goldenLegacyCommit is the same commit as written before checksums: it still
// decodes (graphs created then stay readable), and is marked unchecksummed.
const goldenLegacyCommit = `{"format":1,"id":"01JGQ5Z8M0CCCCCCCCCCCCCCCC","parents":["01JGQ5Z8M0AAAAAAAAAAAAAAAA","01JGQ5Z8M0BBBBBBBBBBBBBBBB"],"height":7,"actor":"act-1","created_at":1767323045000000,"kind":"merge","message":"merge feature","schema":"schemas/0b1c.pg","tables":{"edge:Knows":"tables/edge:Knows/state/e1.json","node:Person":"tables/node:Person/state/p2.json"}}` + "\n"

func TestEncodeGolden(t *testing.T) {
	c := &Commit{
		ID:        mustID(t, idC),
		Parents:   []ID{mustID(t, idA), mustID(t, idB)},
		Height:    7,
		Actor:     "act-1",
		CreatedAt: 1767323045000000,
		Kind:      KindMerge,
		Message:   "merge feature",
		Schema:    "schemas/0b1c.pg",
		Tables:    map[string]string{"node:Person": "tables/node:Person/state/p2.json", "edge:Knows": "tables/edge:Knows/state/e1.json"},
	}
	d := goldenRoundTrip(t, c, goldenCommit)
	if !d.Checksummed() {
		t.Fatal("decoded commit not marked checksummed")
	}
	l, err := Decode(CommitKey(c.ID), []byte(goldenLegacyCommit))
	if err != nil {
		t.Fatalf("legacy commit: %v", err)
	}
	if l.Checksummed() {
		t.Fatal("legacy commit marked checksummed")
	}
	if b3, _ := Encode(l); string(b3) != goldenCommit {
		t.Fatalf("legacy commit re-encodes as %s", b3)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	key := CommitKey(mustID(t, idC))
	genesis := `{"format":1,"id":"` + idC + `","parents":[],"height":0,"created_at":5,"kind":"init","message":"","schema":"schemas/x.pg","tables":{}}`
	if _, err := Decode(key, []byte(genesis)); err != nil {
		t.Fatalf("valid genesis rejected: %v", err)
	}
	tests := []struct {
		name string
		key  string
		data string
		want string // substring of the error
	}{
		{"empty", key, ``, "EOF"},
		{"truncated", key, genesis[:40], "unexpected EOF"},
		{"not-json", key, `hello`, "invalid character"},
		{"trailing", key, genesis + `{}`, "trailing"},
		{"unknown-field", key, strings.Replace(genesis, `"height"`, `"color":1,"height"`, 1), "unknown field"},
		{"future-format", key, strings.Replace(genesis, `"format":1`, `"format":2`, 1), "commit format 2"},
		{"bad-id", key, strings.Replace(genesis, idC, "nope", 1), "id \"nope\""},
		{"id-key-mismatch", CommitKey(mustID(t, idA)), genesis, "does not match key"},
		{"missing-parents", key, strings.Replace(genesis, `"parents":[],`, ``, 1), "missing parents"},
		{"missing-tables", key, strings.Replace(genesis, `,"tables":{}`, ``, 1), "missing tables"},
		{"bad-parent", key, strings.Replace(genesis, `"parents":[]`, `"parents":["zz"]`, 1), "parent \"zz\""},
		{"unknown-kind", key, strings.Replace(genesis, `"init"`, `"frobnicate"`, 1), "unknown kind"},
		{"init-with-parent", key, strings.Replace(strings.Replace(genesis, `"parents":[]`, `"parents":["`+idA+`"]`, 1), `"height":0`, `"height":1`, 1), "genesis"},
		{"mutate-without-parent", key, strings.Replace(genesis, `"init"`, `"mutate"`, 1), "genesis"},
		{"two-parents-not-merge", key, strings.Replace(strings.Replace(strings.Replace(genesis, `"parents":[]`, `"parents":["`+idA+`","`+idB+`"]`, 1), `"height":0`, `"height":1`, 1), `"init"`, `"mutate"`, 1), "two parents"},
		{"three-parents", key, strings.Replace(strings.Replace(strings.Replace(genesis, `"parents":[]`, `"parents":["`+idA+`","`+idB+`","`+idA+`"]`, 1), `"height":0`, `"height":1`, 1), `"init"`, `"merge"`, 1), "3 parents"},
		{"self-parent", key, strings.Replace(strings.Replace(strings.Replace(genesis, `"parents":[]`, `"parents":["`+idC+`"]`, 1), `"height":0`, `"height":1`, 1), `"init"`, `"mutate"`, 1), "own parent"},
		{"height-zero-with-parent", key, strings.Replace(strings.Replace(genesis, `"parents":[]`, `"parents":["`+idA+`"]`, 1), `"init"`, `"mutate"`, 1), "height 0"},
		{"bad-time", key, strings.Replace(genesis, `"created_at":5`, `"created_at":0`, 1), "created_at"},
		{"bad-schema", key, strings.Replace(genesis, `schemas/x.pg`, `x.pg`, 1), "schema key"},
		{"empty-table-key", key, strings.Replace(genesis, `"tables":{}`, `"tables":{"node:P":""}`, 1), "table entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.key, []byte(tt.data))
			if err == nil {
				t.Fatal("decoded corrupt commit")
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Key != tt.key {
				t.Fatalf("err %v is not a CorruptError naming %s", err, tt.key)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestValidateBranchName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"main", true}, {"feature", true}, {"feature/child", true}, {"a.b-c_D9", true}, {"__run__x", true},
		{"", false}, {" x", false}, {"x ", false}, {"/x", false}, {"x/", false}, {"a//b", false},
		{"a..b", false}, {"a\\b", false}, {"x.lock", false}, {"a/./b", false}, {"a b", false}, {"é", false},
		{"a:b", false}, {strings.Repeat("a", 201), false},
	}
	for _, tt := range tests {
		err := ValidateBranchName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateBranchName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidBranch) {
			t.Errorf("ValidateBranchName(%q) error %v is not ErrInvalidBranch", tt.name, err)
		}
	}
}

// TestCommitKeyForm pins CommitKey's one-allocation build to the plain
// "commits/<ulid>.json" spelling that every stored graph uses.
func TestCommitKeyForm(t *testing.T) {
	for _, id := range []ID{{}, ulid.MustParse("01J0000000000000000000000Z"), ulid.Make(), ulid.Make()} {
		if got, want := CommitKey(id), "commits/"+id.String()+".json"; got != want {
			t.Fatalf("CommitKey(%s) = %q, want %q", id, got, want)
		}
	}
	id := ulid.Make()
	if n := testing.AllocsPerRun(100, func() { _ = CommitKey(id) }); n > 1 {
		t.Fatalf("CommitKey allocates %v times, want 1", n)
	}
}
