package commit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// ID names a commit. It is a ULID: 48-bit millisecond time + 80 random bits,
// so ids minted by independent processes never collide in practice and sort
// roughly by creation time (never relied on for correctness; heights order
// history).
type ID = ulid.ULID

// ParseID parses the canonical 26-character ULID text of a commit id.
func ParseID(s string) (ID, error) {
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return ID{}, fmt.Errorf("commit id %q: %w", s, err)
	}
	return id, nil
}

// Kind says which operation produced a commit.
type Kind string

// Known kinds. Decoding refuses any other value: a new kind is a format change.
const (
	KindInit        Kind = "init"        // genesis, written by Init
	KindLoad        Kind = "load"        // bulk JSONL load
	KindMutate      Kind = "mutate"      // .gq change query
	KindMerge       Kind = "merge"       // three-way branch merge (two parents)
	KindSchema      Kind = "schema"      // schema apply
	KindMaintenance Kind = "maintenance" // compaction / index build; content-preserving
)

func (k Kind) valid() bool {
	switch k {
	case KindInit, KindLoad, KindMutate, KindMerge, KindSchema, KindMaintenance:
		return true
	}
	return false
}

// commitFormat is the encoding version inside every commit object. It moves
// with the graph format ratchet (format.go) and is checked on every decode.
// Format 2 (docs/format/commit.md) is a commit naming at least one inline
// table state (table.IsInlineState); a commit without one is written as
// format 1, byte for byte as before.
const (
	commitFormat       = 1
	commitFormatInline = 2
)

// formatOf is the format a commit with these tables is written in.
func formatOf(tables map[string]string) int {
	for _, k := range tables {
		if table.IsInlineState(k) {
			return commitFormatInline
		}
	}
	return commitFormat
}

const commitPrefix = "commits/"

// CommitKey returns the object key of a commit.
func CommitKey(id ID) string {
	// One allocation: the key is built on every warm read of a commit.
	b := make([]byte, len(commitPrefix), len(commitPrefix)+ulid.EncodedSize+len(".json"))
	copy(b, commitPrefix)
	b = b[:len(commitPrefix)+ulid.EncodedSize]
	_ = id.MarshalTextTo(b[len(commitPrefix):]) // cannot fail: the buffer has EncodedSize bytes
	return string(append(b, ".json"...))
}

// Commit is one immutable node of the history DAG. It names the complete
// state of the graph: the schema and every table's state object.
//
// Values returned by this package are shared (cached) and must not be
// modified; use Clone first.
type Commit struct {
	ID ID
	// Parents: none for genesis, the previous head first, then (merge only)
	// the merged source head.
	// INVARIANT: len(Parents)==0 iff Kind==KindInit, len(Parents)==2 implies
	// Kind==KindMerge (TestDecodeCorrupt).
	Parents []ID
	// Height is the distance from genesis: 0 for genesis, else 1 + the
	// largest parent height. Merge-base and ancestry walks use it to stop early.
	// INVARIANT: Height == 1 + max(parent heights) (TestPublishHeights).
	Height uint64
	Actor  string // "" when no actor was given
	// Branch is the branch the commit was published on (its authored
	// branch); "" in objects written before the field existed.
	Branch    string
	CreatedAt int64 // unix microseconds
	Kind      Kind
	Message   string
	Schema    string            // key of the schema source object
	Tables    map[string]string // table name → table-state object key

	// summed records that the decoded object carried a checksum (every
	// commit this build writes does; checksum.go).
	summed bool
}

// Checksummed reports whether the commit object carried a checksum. Commits
// written before checksums existed did not; Verify counts them.
func (c *Commit) Checksummed() bool { return c.summed }

// Parent returns the first parent, and false for genesis.
func (c *Commit) Parent() (ID, bool) {
	if len(c.Parents) == 0 {
		return ID{}, false
	}
	return c.Parents[0], true
}

// Clone returns a deep copy that the caller may modify.
func (c *Commit) Clone() *Commit {
	d := *c
	d.Parents = append([]ID(nil), c.Parents...)
	d.Tables = make(map[string]string, len(c.Tables))
	for k, v := range c.Tables {
		d.Tables[k] = v
	}
	return &d
}

// wireCommit is the JSON shape; see docs/format/commit.md.
type wireCommit struct {
	Format    int               `json:"format"`
	ID        string            `json:"id"`
	Parents   []string          `json:"parents"`
	Height    uint64            `json:"height"`
	Actor     string            `json:"actor,omitempty"`
	Branch    string            `json:"branch,omitempty"`
	CreatedAt int64             `json:"created_at"`
	Kind      Kind              `json:"kind"`
	Message   string            `json:"message"`
	Schema    string            `json:"schema"`
	Tables    map[string]string `json:"tables"`
	// Sum is the SHA-256 of the canonical encoding without Sum (checksum.go).
	Sum string `json:"sum,omitempty"`
}

// Encode returns the canonical bytes of c (map keys sorted, one trailing
// newline), after checking c would decode.
func Encode(c *Commit) ([]byte, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	w := wireCommit{
		Format:    formatOf(c.Tables),
		ID:        c.ID.String(),
		Parents:   make([]string, len(c.Parents)),
		Height:    c.Height,
		Actor:     c.Actor,
		Branch:    c.Branch,
		CreatedAt: c.CreatedAt,
		Kind:      c.Kind,
		Message:   c.Message,
		Schema:    c.Schema,
		Tables:    c.Tables,
	}
	for i, p := range c.Parents {
		w.Parents[i] = p.String()
	}
	if w.Tables == nil {
		w.Tables = map[string]string{}
	}
	sum, err := sealed(w)
	if err != nil {
		return nil, err
	}
	w.Sum = sum
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Decode parses and validates the bytes stored under key. Any defect yields a
// *CorruptError naming key. The id inside must match the key.
func Decode(key string, data []byte) (*Commit, error) {
	var w wireCommit
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, corrupt(key, "%v", err)
	}
	if dec.More() {
		return nil, corrupt(key, "trailing data after commit")
	}
	summed := w.Sum != ""
	if summed {
		want := w.Sum
		w.Sum = ""
		if got, err := sealed(w); err != nil || got != want || !validSum(want) {
			return nil, corrupt(key, "checksum mismatch: the object was modified after it was written")
		}
	}
	if w.Format != formatOf(w.Tables) {
		if w.Format != commitFormat && w.Format != commitFormatInline {
			return nil, corrupt(key, "commit format %d, want %d or %d", w.Format, commitFormat, commitFormatInline)
		}
		return nil, corrupt(key, "commit format %d, but its table map says %d (format 2 is exactly the commits naming an inline table state)", w.Format, formatOf(w.Tables))
	}
	id, err := ulid.ParseStrict(w.ID)
	if err != nil {
		return nil, corrupt(key, "id %q: %v", w.ID, err)
	}
	if want := CommitKey(id); key != want {
		return nil, corrupt(key, "id %s does not match key", w.ID)
	}
	c := &Commit{
		ID:        id,
		Parents:   make([]ID, 0, len(w.Parents)),
		Height:    w.Height,
		Actor:     w.Actor,
		Branch:    w.Branch,
		CreatedAt: w.CreatedAt,
		Kind:      w.Kind,
		Message:   w.Message,
		Schema:    w.Schema,
		Tables:    w.Tables,
		summed:    summed,
	}
	if w.Parents == nil {
		return nil, corrupt(key, "missing parents")
	}
	for _, p := range w.Parents {
		pid, err := ulid.ParseStrict(p)
		if err != nil {
			return nil, corrupt(key, "parent %q: %v", p, err)
		}
		c.Parents = append(c.Parents, pid)
	}
	if c.Tables == nil {
		return nil, corrupt(key, "missing tables")
	}
	if err := c.validate(); err != nil {
		return nil, corrupt(key, "%v", err)
	}
	return c, nil
}

// validate checks everything that can be checked without reading parents.
func (c *Commit) validate() error {
	switch {
	case c.ID == (ID{}):
		return fmt.Errorf("zero id")
	case !c.Kind.valid():
		return fmt.Errorf("unknown kind %q", c.Kind)
	case len(c.Parents) > 2:
		return fmt.Errorf("%d parents (at most 2)", len(c.Parents))
	case (len(c.Parents) == 0) != (c.Kind == KindInit):
		return fmt.Errorf("kind %q with %d parents (genesis, and only genesis, is %q)", c.Kind, len(c.Parents), KindInit)
	case len(c.Parents) == 2 && c.Kind != KindMerge:
		return fmt.Errorf("two parents but kind %q", c.Kind)
	case (c.Height == 0) != (len(c.Parents) == 0):
		return fmt.Errorf("height %d with %d parents", c.Height, len(c.Parents))
	case c.CreatedAt <= 0:
		return fmt.Errorf("created_at %d", c.CreatedAt)
	case !strings.HasPrefix(c.Schema, schemaPrefix):
		return fmt.Errorf("schema key %q outside %s", c.Schema, schemaPrefix)
	}
	for i, p := range c.Parents {
		if p == c.ID {
			return fmt.Errorf("commit is its own parent")
		}
		if i == 1 && p == c.Parents[0] {
			return fmt.Errorf("duplicate parent %s", p)
		}
	}
	for name, key := range c.Tables {
		if name == "" || key == "" {
			return fmt.Errorf("table entry %q → %q", name, key)
		}
	}
	return nil
}

// sizeOf estimates the retained heap of a decoded commit for the cache.
func sizeOf(c *Commit, encoded int) int64 {
	return int64(2*encoded + 64*len(c.Tables) + 128)
}

// CheckTables verifies that c's table map names exactly the tables its
// schema declares: want maps every table name of the schema to the key
// prefix its state objects live under (e.g. "node:Person" →
// "tables/node-Person/state/"). A table the schema does not name, a schema
// table with no entry, or a state key outside its table's prefix is
// corruption of the commit (never read as an empty or foreign table), so
// the error is a *CorruptError naming the commit.
//
// INVARIANT: every read and write resolves its commit through this check
// (TestCheckTables; the byte-flip tests of the root package).
func CheckTables(c *Commit, want map[string]string) error {
	for name, sk := range c.Tables {
		prefix, ok := want[name]
		if !ok {
			return corrupt(CommitKey(c.ID), "table map names %q, which its schema %s does not declare", name, c.Schema)
		}
		if !strings.HasPrefix(sk, prefix) || len(sk) == len(prefix) {
			return corrupt(CommitKey(c.ID), "table %q has state key %q outside %s", name, sk, prefix)
		}
	}
	if len(c.Tables) != len(want) {
		var missing []string
		for name := range want {
			if _, ok := c.Tables[name]; !ok {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		return corrupt(CommitKey(c.ID), "table map lacks %s, declared by its schema %s", strings.Join(missing, ", "), c.Schema)
	}
	return nil
}
