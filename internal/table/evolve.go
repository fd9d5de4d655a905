package table

import (
	"fmt"
	"slices"
)

// Schema evolution without rewriting data. A table's fragments are
// immutable Parquet files written under the schema the table had then. When
// the schema changes by metadata only — a column added (nullable), renamed,
// dropped or reordered — Evolve returns a state with the new schema whose
// fragments keep their files and record how to read them (Fragment.Fields):
// which file field holds each column, or none (the column reads as null).
// The scanner applies the map when it opens a file (scan.go, fileColumns);
// nothing above this package sees a difference, and fragments written later
// use the new schema directly.

// Evolve returns s under schema next. from[i] is the index in s's schema of
// the column next.Columns[i] continues, or -1 for a new column, which must be
// nullable. Continued columns must keep their storage type (nullability may
// only widen). Columns of s that no i names are dropped from the state (the
// files keep them; scans never read them). Index references follow renamed
// columns; one naming a dropped column is removed.
//
// INVARIANT: no data file is read or written; every live row of s reads
// the same under next, with new columns null (TestEvolveReadsOldFragments).
func (s *State) Evolve(next Schema, from []int) (*State, error) {
	if err := next.Validate(); err != nil {
		return nil, err
	}
	if len(from) != len(next.Columns) {
		return nil, fmt.Errorf("%w: evolve: %d sources for %d columns", ErrSchema, len(from), len(next.Columns))
	}
	old := s.schema.Columns
	for i, j := range from {
		c := next.Columns[i]
		switch {
		case j < -1 || j >= len(old):
			return nil, fmt.Errorf("%w: evolve: column %q from index %d of %d", ErrSchema, c.Name, j, len(old))
		case j == -1 && !c.Type.Nullable:
			return nil, fmt.Errorf("%w: evolve: new column %q must be nullable", ErrSchema, c.Name)
		case j >= 0:
			o := old[j].Type
			if o.Kind != c.Type.Kind || o.Elem != c.Type.Elem || o.Dim != c.Type.Dim || (o.Nullable && !c.Type.Nullable) {
				return nil, fmt.Errorf("%w: evolve: column %q cannot change type from %v to %v without a rewrite", ErrSchema, c.Name, o.Kind, c.Type.Kind)
			}
		}
	}
	identity := len(old) == len(next.Columns)
	for i, j := range from {
		if j != i || old[i].Name != next.Columns[i].Name {
			identity = false
		}
	}
	frags := make([]Fragment, len(s.fragments))
	for k, f := range s.fragments {
		f = f.clone()
		if !identity {
			fields := make([]string, len(next.Columns))
			stats := make([]ColumnStats, len(next.Columns))
			for i, j := range from {
				if j < 0 {
					stats[i] = ColumnStats{Nulls: f.Rows}
					continue
				}
				stats[i] = f.Stats[j]
				if f.Fields != nil {
					fields[i] = f.Fields[j]
				} else {
					fields[i] = old[j].Name
				}
			}
			f.Stats = stats
			// The map stays even where it reads as the identity: only the
			// file's footer knows whether the file holds other fields too.
			f.Fields = fields
		}
		frags[k] = f
	}
	rename := map[string]string{}
	for i, j := range from {
		if j >= 0 {
			rename[old[j].Name] = next.Columns[i].Name
		}
	}
	var idx []IndexRef
	for _, r := range s.Indexes() {
		ok := true
		for c, name := range r.Columns {
			n, kept := rename[name]
			if !kept {
				ok = false
				break
			}
			r.Columns[c] = n
		}
		if ok {
			idx = append(idx, r)
		}
	}
	n := &State{schema: cloneSchema(next), fragments: frags, indexes: idx}
	if err := n.validate(); err != nil {
		return nil, err
	}
	return n, nil
}

// fileColumns maps the scanned schema's columns onto the fields of one
// fragment's file: out[i] is the file field index of column i, or -1 when
// the file has none (the column reads as null). names are the file's field
// names, in file order.
func fileColumns(f Fragment, schema Schema, names []string) ([]int, error) {
	out := make([]int, len(schema.Columns))
	if f.Fields == nil {
		if len(names) != len(schema.Columns) {
			return nil, fmt.Errorf("file has %d columns, schema has %d", len(names), len(schema.Columns))
		}
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	for i, name := range f.Fields {
		if name == "" {
			out[i] = -1
			continue
		}
		j := slices.Index(names, name)
		if j < 0 {
			return nil, fmt.Errorf("file has no field %q for column %q", name, schema.Columns[i].Name)
		}
		out[i] = j
	}
	return out, nil
}
