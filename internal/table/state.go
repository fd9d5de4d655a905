package table

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// StateFormatVersion is the newest table-state format this build writes
// and reads. Version 2 adds per-fragment index references (Fragment.Index);
// a state without any is still written as version 1, byte for byte as
// before, so older builds read it. Versions are a ratchet: a number is never
// reused, and ReadState refuses any version outside [1, StateFormatVersion]
// with a *VersionError naming both. Version 3 adds per-fragment field maps
// (Fragment.Fields, written by schema evolution); a state without any is
// written as before. Version 4 adds inline deletion vectors (a fragment's
// DV reference starting with InlineDVPrefix); a state without any is
// written as before, so builds that read 1–3 read it. Version 5 adds
// inline fragment indexes (a fragment's index reference starting with
// InlineIndexPrefix); a state without any is written as before, so builds
// that read 1–4 read it.
const StateFormatVersion = 5

// Failpoint names of the state writer.
const (
	FPBeforeState = "table/before-state"
	FPAfterState  = "table/after-state"
)

// IndexRef names an index object built over the table. The table package only
// carries these through state transitions; internal/index gives them meaning.
type IndexRef struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Columns []string `json:"columns"`
	Key     string   `json:"key"`
	// Fragments lists the fragment keys the index covers; fragments appended
	// later are scanned exactly until the index is rebuilt.
	Fragments []string `json:"fragments,omitempty"`
}

// State is one immutable version of a table: its schema, fragments with their
// deletion vectors, and index references. A *State is never modified after
// construction; every operation returns a new State, so a State may be shared
// freely between goroutines, commits and branches.
type State struct {
	// INVARIANT: len(f.Stats) == len(schema.Columns) for every fragment, fragment
	// keys are distinct, and every fragment has at least one live row
	// (TestStateValidateRejects, TestDeleteAllRowsDropsFragment).
	schema    Schema
	fragments []Fragment
	indexes   []IndexRef
}

// NewState returns the empty state of a table with the given schema.
func NewState(schema Schema) (*State, error) {
	if err := schema.Validate(); err != nil {
		return nil, err
	}
	return &State{schema: cloneSchema(schema)}, nil
}

func cloneSchema(s Schema) Schema {
	return Schema{Columns: append([]Column(nil), s.Columns...)}
}

// Schema returns the table schema.
func (s *State) Schema() Schema { return cloneSchema(s.schema) }

// Fragments returns a copy of the fragment list.
func (s *State) Fragments() []Fragment {
	out := make([]Fragment, len(s.fragments))
	for i, f := range s.fragments {
		out[i] = f.clone()
	}
	return out
}

// NumFragments is the number of fragments.
func (s *State) NumFragments() int { return len(s.fragments) }

// Indexes returns a copy of the index references.
func (s *State) Indexes() []IndexRef {
	out := make([]IndexRef, len(s.indexes))
	for i, r := range s.indexes {
		r.Columns = append([]string(nil), r.Columns...)
		r.Fragments = append([]string(nil), r.Fragments...)
		out[i] = r
	}
	return out
}

// Rows is the number of live (not deleted) rows.
func (s *State) Rows() int64 {
	var n int64
	for _, f := range s.fragments {
		n += f.Live()
	}
	return n
}

func (s *State) fragmentIndex(key string) int {
	for i, f := range s.fragments {
		if f.Key == key {
			return i
		}
	}
	return -1
}

func (s *State) with(frags []Fragment, idx []IndexRef) (*State, error) {
	n := &State{schema: s.schema, fragments: frags, indexes: idx}
	if err := n.validate(); err != nil {
		return nil, err
	}
	return n, nil
}

// Append returns a new state with the fragments added at the end.
func (s *State) Append(frags ...Fragment) (*State, error) {
	out := s.Fragments()
	for _, f := range frags {
		out = append(out, f.clone())
	}
	return s.with(out, s.indexes)
}

// Replace returns a new state without the fragments whose keys are in remove
// and with add appended: the primitive of compaction and overwrite. Index
// references are kept; an index covering a removed fragment is stale, and
// dropping or rebuilding it is the index layer's job.
func (s *State) Replace(remove []string, add []Fragment) (*State, error) {
	drop := make(map[string]bool, len(remove))
	for _, k := range remove {
		if s.fragmentIndex(k) < 0 {
			return nil, fmt.Errorf("%w: %s", ErrUnknownFragment, k)
		}
		drop[k] = true
	}
	var out []Fragment
	for _, f := range s.fragments {
		if !drop[f.Key] {
			out = append(out, f.clone())
		}
	}
	for _, f := range add {
		out = append(out, f.clone())
	}
	return s.with(out, s.indexes)
}

// WithIndexes returns a new state whose index references are refs.
func (s *State) WithIndexes(refs []IndexRef) (*State, error) {
	// Fragments are shared: neither state ever modifies them.
	return s.with(s.fragments, (&State{indexes: refs}).Indexes())
}

// validate checks the structural invariants of a state.
func (s *State) validate() error {
	if err := s.schema.Validate(); err != nil {
		return err
	}
	seen := make(map[string]bool, len(s.fragments))
	for _, f := range s.fragments {
		switch {
		case f.Key == "":
			return fmt.Errorf("%w: fragment with empty key", ErrSchema)
		case seen[f.Key]:
			return fmt.Errorf("%w: fragment %s listed twice", ErrSchema, f.Key)
		case len(f.Stats) != len(s.schema.Columns):
			return fmt.Errorf("%w: fragment %s has statistics for %d columns, schema has %d", ErrSchema, f.Key, len(f.Stats), len(s.schema.Columns))
		case f.Rows <= 0 || f.Bytes <= 0:
			return fmt.Errorf("%w: fragment %s has %d rows, %d bytes", ErrSchema, f.Key, f.Rows, f.Bytes)
		case f.Deleted < 0 || f.Deleted >= f.Rows:
			return fmt.Errorf("%w: fragment %s has %d of %d rows deleted", ErrSchema, f.Key, f.Deleted, f.Rows)
		case (f.Deleted == 0) != (f.DV == ""):
			return fmt.Errorf("%w: fragment %s: deleted count %d disagrees with deletion vector %q", ErrSchema, f.Key, f.Deleted, f.DV)
		case (f.IndexBytes > 0) != (f.Index != "") || f.IndexBytes < 0:
			return fmt.Errorf("%w: fragment %s: index %q has %d bytes", ErrSchema, f.Key, f.Index, f.IndexBytes)
		case f.Fields != nil && len(f.Fields) != len(s.schema.Columns):
			return fmt.Errorf("%w: fragment %s maps %d fields, schema has %d columns", ErrSchema, f.Key, len(f.Fields), len(s.schema.Columns))
		}
		for i, name := range f.Fields {
			if name == "" && !s.schema.Columns[i].Type.Nullable {
				return fmt.Errorf("%w: fragment %s lacks non-nullable column %q", ErrSchema, f.Key, s.schema.Columns[i].Name)
			}
		}
		seen[f.Key] = true
	}
	return nil
}

// --- encoding ---

type stateJSON struct {
	Format    int            `json:"format"`
	Columns   []Column       `json:"columns"`
	Rows      int64          `json:"rows"`
	Fragments []fragmentJSON `json:"fragments"`
	Indexes   []IndexRef     `json:"indexes,omitempty"`
}

type fragmentJSON struct {
	Key     string      `json:"key"`
	Rows    int64       `json:"rows"`
	Bytes   int64       `json:"bytes"`
	DV      string      `json:"dv,omitempty"`
	Deleted int64       `json:"deleted,omitempty"`
	Stats   []statsJSON `json:"stats"`
	// Format 2 and later.
	Index      string `json:"index,omitempty"`
	IndexBytes int64  `json:"index_bytes,omitempty"`
	// Format 3 only.
	Fields []string `json:"fields,omitempty"`
}

// Encode returns the canonical bytes of the state. Equal states encode to
// equal bytes, which is what makes content addressing share them.
//
// INVARIANT: Encode is deterministic and DecodeState(Encode(s)) encodes to the
// same bytes (TestStateGoldenRoundTrip, TestStateContentAddressed).
func (s *State) Encode() ([]byte, error) {
	w := stateJSON{
		Format:    1,
		Columns:   s.schema.Columns,
		Rows:      s.Rows(),
		Fragments: make([]fragmentJSON, len(s.fragments)),
		Indexes:   s.indexes,
	}
	for i, f := range s.fragments {
		fj := fragmentJSON{Key: f.Key, Rows: f.Rows, Bytes: f.Bytes, DV: f.DV, Deleted: f.Deleted, Stats: make([]statsJSON, len(f.Stats)),
			Index: f.Index, IndexBytes: f.IndexBytes, Fields: f.Fields}
		if f.Index != "" {
			w.Format = max(w.Format, 2)
		}
		if f.Fields != nil {
			w.Format = max(w.Format, 3)
		}
		if IsInlineDV(f.DV) {
			w.Format = max(w.Format, 4)
		}
		if IsInlineIndex(f.Index) {
			w.Format = 5
		}
		for j, cs := range f.Stats {
			min, err := encodeBound(cs.Min)
			if err != nil {
				return nil, err
			}
			max, err := encodeBound(cs.Max)
			if err != nil {
				return nil, err
			}
			fj.Stats[j] = statsJSON{Column: s.schema.Columns[j].Name, Nulls: cs.Nulls, Min: min, Max: max}
		}
		w.Fragments[i] = fj
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("table: encode state: %w", err)
	}
	// Compact JSON plus the encoder's trailing newline: states are read on
	// every cold query, so bytes matter more than indentation.
	return buf.Bytes(), nil
}

// StateKey is the content address of encoded state bytes under prefix:
// <prefix>/state/<hex sha256>.json.
func StateKey(prefix string, data []byte) string {
	sum := sha256.Sum256(data)
	return prefix + "/state/" + hex.EncodeToString(sum[:]) + ".json"
}

// DecodeState parses state bytes read from key, verifying the content address
// (when key has the state naming form), the format version and every
// structural invariant. Failures are *CorruptError or *VersionError.
func DecodeState(key string, data []byte) (*State, error) {
	if name := path.Base(key); strings.HasSuffix(name, ".json") && path.Base(path.Dir(key)) == "state" {
		sum := sha256.Sum256(data)
		if strings.TrimSuffix(name, ".json") != hex.EncodeToString(sum[:]) {
			return nil, corrupt(key, -1, "content does not match its sha256 name", nil)
		}
	}
	var probe struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, corrupt(key, jsonOffset(err), "undecodable state JSON", err)
	}
	if probe.Format == nil {
		return nil, corrupt(key, -1, "state has no format field", nil)
	}
	if *probe.Format < 1 || *probe.Format > StateFormatVersion {
		return nil, &VersionError{Key: key, Kind: "table state", Got: *probe.Format, Want: StateFormatVersion}
	}
	var w stateJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, corrupt(key, jsonOffset(err), "undecodable state JSON", err)
	}
	s := &State{schema: Schema{Columns: w.Columns}, indexes: w.Indexes, fragments: make([]Fragment, len(w.Fragments))}
	if err := s.schema.Validate(); err != nil {
		return nil, corrupt(key, -1, "invalid schema", err)
	}
	for i, fj := range w.Fragments {
		f := Fragment{Key: fj.Key, Rows: fj.Rows, Bytes: fj.Bytes, DV: fj.DV, Deleted: fj.Deleted, Stats: make([]ColumnStats, len(fj.Stats)),
			Index: fj.Index, IndexBytes: fj.IndexBytes, Fields: fj.Fields}
		if fj.Fields != nil && *probe.Format < 3 {
			return nil, corrupt(key, -1, fmt.Sprintf("fragment %s has a field map in a format %d state", fj.Key, *probe.Format), nil)
		}
		if fj.Index != "" && *probe.Format < 2 {
			return nil, corrupt(key, -1, fmt.Sprintf("fragment %s has an index reference in a format %d state", fj.Key, *probe.Format), nil)
		}
		if IsInlineDV(fj.DV) {
			if *probe.Format < 4 {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s has an inline deletion vector in a format %d state", fj.Key, *probe.Format), nil)
			}
			// Checked here, not on first use: the vector is part of the
			// state's bytes, and a state is verified as a whole.
			if _, err := loadDV(context.Background(), nil, f); err != nil {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s inline deletion vector", fj.Key), err)
			}
		}
		if IsInlineIndex(fj.Index) {
			if *probe.Format < 5 {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s has an inline index in a format %d state", fj.Key, *probe.Format), nil)
			}
			// Checked with the state, like an inline vector: the bytes,
			// their size and the header's row count.
			b, err := inlineIndexBytes(fj.Index, fj.IndexBytes)
			if err == nil {
				var h *fidxHeader
				if h, err = decodeFidxHeader(inlineIndexName, b, fj.IndexBytes); err == nil && h.rows != fj.Rows {
					err = fmt.Errorf("covers %d rows, the fragment has %d", h.rows, fj.Rows)
				}
			}
			if err != nil {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s inline index", fj.Key), err)
			}
		}
		if len(fj.Stats) != len(w.Columns) {
			return nil, corrupt(key, -1, fmt.Sprintf("fragment %s has statistics for %d columns, schema has %d", fj.Key, len(fj.Stats), len(w.Columns)), nil)
		}
		for j, sj := range fj.Stats {
			col := w.Columns[j]
			if sj.Column != col.Name {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s statistics %d are for %q, not %q", fj.Key, j, sj.Column, col.Name), nil)
			}
			cs := ColumnStats{Nulls: sj.Nulls}
			if col.Type.Kind.scalar() {
				var err error
				if cs.Min, err = decodeBound(col.Type.Kind, sj.Min); err != nil {
					return nil, corrupt(key, -1, fmt.Sprintf("fragment %s column %q min", fj.Key, col.Name), err)
				}
				if cs.Max, err = decodeBound(col.Type.Kind, sj.Max); err != nil {
					return nil, corrupt(key, -1, fmt.Sprintf("fragment %s column %q max", fj.Key, col.Name), err)
				}
			} else if len(sj.Min) > 0 || len(sj.Max) > 0 {
				return nil, corrupt(key, -1, fmt.Sprintf("fragment %s column %q has bounds but is not scalar", fj.Key, col.Name), nil)
			}
			f.Stats[j] = cs
		}
		s.fragments[i] = f
	}
	if err := s.validate(); err != nil {
		return nil, corrupt(key, -1, "invalid state", err)
	}
	if w.Format == 2 && !slices.ContainsFunc(s.fragments, func(f Fragment) bool { return f.Index != "" }) {
		return nil, corrupt(key, -1, "format 2 state without any fragment index (writers use format 1)", nil)
	}
	if w.Format == 3 && !slices.ContainsFunc(s.fragments, func(f Fragment) bool { return f.Fields != nil }) {
		return nil, corrupt(key, -1, "format 3 state without any field map (writers use format 1 or 2)", nil)
	}
	if w.Format == 4 && !slices.ContainsFunc(s.fragments, func(f Fragment) bool { return IsInlineDV(f.DV) }) {
		return nil, corrupt(key, -1, "format 4 state without any inline deletion vector (writers use format 1–3)", nil)
	}
	if w.Format == 5 && !slices.ContainsFunc(s.fragments, func(f Fragment) bool { return IsInlineIndex(f.Index) }) {
		return nil, corrupt(key, -1, "format 5 state without any inline fragment index (writers use format 1–4)", nil)
	}
	if w.Rows != s.Rows() {
		return nil, corrupt(key, -1, fmt.Sprintf("rows field %d disagrees with fragments (%d live)", w.Rows, s.Rows()), nil)
	}
	return s, nil
}

func jsonOffset(err error) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Offset
	}
	return -1
}

// WriteState stores the state under its content address and returns the key.
// Writing is idempotent: an existing object under the key holds the same bytes
// (the name is their hash), so ErrExists counts as success.
//
// A state naming an object ctx's ledger holds (the write's new fragment,
// deletion vector or index) is the write's own — no other write can encode
// those bytes — and joins the ledger, before the put so that a put that
// failed after creating the object is covered too. Any other state may be
// shared with other writes, published ones included, and is never recorded
// (storage.Ledger).
func WriteState(ctx context.Context, st storage.Store, prefix string, s *State) (string, error) {
	data, err := s.Encode()
	if err != nil {
		return "", err
	}
	return writeState(ctx, st, prefix, s, data)
}

// writeState stores the encoding data of s under its content address.
func writeState(ctx context.Context, st storage.Store, prefix string, s *State, data []byte) (string, error) {
	key := StateKey(prefix, data)
	if l := storage.LedgerOf(ctx); l != nil && s.namesAny(l) {
		l.Add(key)
	}
	if err := failpoint.Hit(FPBeforeState); err != nil {
		return "", err
	}
	if _, err := st.PutIfAbsent(ctx, key, data); err != nil && !errors.Is(err, storage.ErrExists) {
		return "", fmt.Errorf("table: write state %s: %w", key, err)
	}
	if err := failpoint.Hit(FPAfterState); err != nil {
		return "", err
	}
	return key, nil
}

// namesAny reports whether the state names an object l holds.
func (s *State) namesAny(l *storage.Ledger) bool {
	for _, f := range s.fragments {
		if l.Has(f.Key) || (f.DV != "" && l.Has(f.DV)) || (f.Index != "" && l.Has(f.Index)) {
			return true
		}
	}
	for _, r := range s.indexes {
		if l.Has(r.Key) {
			return true
		}
	}
	return false
}

// InlineStateMark starts the last segment of a state key that carries the
// state itself instead of naming an object (docs/format/table.md, "Inline
// table states"): <prefix>/state/inline:<the state's bytes in unpadded
// base64url>. A commit names such a key like any other (commit format 2);
// ReadState decodes it without a request.
const InlineStateMark = "inline:"

// DefaultInlineStateBytes is the largest encoded state the engine carries
// inline in its commit (WriteStateInline): a table of a dozen or so large
// fragments and the handful of small ones automatic compaction leaves
// (each fragment 0.3-1 KB with its statistics and inline index), so that
// a single-row write to it creates no state object.
const DefaultInlineStateBytes = 12 << 10

// IsInlineState reports whether a state key carries its state. It looks
// at the segment after "/state/" rather than at path.Base: an inline key
// is up to 16 KiB of base64, and path.Base scans it byte by byte from the
// end for a slash it does not hold — a fifth of a warm 2-hop query's time,
// which asks for every table it touches.
func IsInlineState(key string) bool {
	if i := strings.Index(key, "/state/"); i >= 0 {
		return strings.HasPrefix(key[i+len("/state/"):], InlineStateMark)
	}
	return strings.HasPrefix(path.Base(key), InlineStateMark)
}

// InlineStateKey is the key under prefix that carries the state bytes data.
func InlineStateKey(prefix string, data []byte) string {
	return prefix + "/state/" + InlineStateMark + base64.RawURLEncoding.EncodeToString(data)
}

// inlineStateBytes returns the state bytes an inline key carries.
func inlineStateBytes(key string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(path.Base(key), InlineStateMark))
	if err != nil {
		return nil, corrupt(key, -1, "inline table state is not base64url", err)
	}
	return b, nil
}

// WriteStateInline is WriteState, except that a state whose encoding is at
// most inline bytes is not stored: its key carries it (InlineStateKey). The
// failpoints fire either way. An inline state is no object, so no ledger
// records it.
func WriteStateInline(ctx context.Context, st storage.Store, prefix string, s *State, inline int) (string, error) {
	data, err := s.Encode()
	if err != nil {
		return "", err
	}
	if len(data) > inline {
		return writeState(ctx, st, prefix, s, data)
	}
	if err := failpoint.Hit(FPBeforeState); err != nil {
		return "", err
	}
	if err := failpoint.Hit(FPAfterState); err != nil {
		return "", err
	}
	return InlineStateKey(prefix, data), nil
}

// MaterializeState returns a key naming an object for the state at key:
// key itself, or for an inline key the content address of its bytes,
// written (PutIfAbsent) under its table prefix. A commit spills an
// inherited inline state that way when its inline states outgrow their
// bound.
func MaterializeState(ctx context.Context, st storage.Store, key string) (string, error) {
	if !IsInlineState(key) {
		return key, nil
	}
	data, err := inlineStateBytes(key)
	if err != nil {
		return "", err
	}
	s, err := DecodeState(key, data)
	if err != nil {
		return "", err
	}
	return writeState(ctx, st, strings.TrimSuffix(path.Dir(key), "/state"), s, data)
}

// ReadState fetches and decodes the state at key (an inline key is decoded
// without a request).
func ReadState(ctx context.Context, st storage.Store, key string) (*State, error) {
	if IsInlineState(key) {
		data, err := inlineStateBytes(key)
		if err != nil {
			return nil, err
		}
		return DecodeState(key, data)
	}
	data, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("table: read state %s: %w", key, err)
	}
	return DecodeState(key, data)
}
