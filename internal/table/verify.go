package table

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Checks behind `omnigraph verify` (internal/integrity). Reads use the same
// validation; these entry points only let a verifier ask for it object by
// object.

// VerifyDeletionVector reads f's deletion vector and checks it is intact and
// belongs to f (fragment id, row count and deleted count agree with the
// state). f must have a deletion vector.
func VerifyDeletionVector(ctx context.Context, st storage.Store, f Fragment) error {
	if f.DV == "" {
		return fmt.Errorf("table: fragment %s has no deletion vector", f.Key)
	}
	_, err := loadDV(ctx, st, f)
	return err
}

// VerifyFragment checks that f exists with the size its state records and
// that its Parquet footer matches the schema and row count. With deep it
// also decodes every column of every row (deletion vector applied), so data
// pages that do not decode are found too.
func VerifyFragment(ctx context.Context, st storage.Store, schema Schema, f Fragment, deep bool) error {
	s, err := NewState(schema)
	if err != nil {
		return err
	}
	if s, err = s.Append(f); err != nil {
		return err
	}
	// Reads open a fragment by the size the state records and, on a remote
	// store, never ask for the real one; verify does, so an object that
	// grew or shrank is reported even where the bytes read are intact.
	info, err := st.Stat(ctx, f.Key)
	if err != nil {
		return fmt.Errorf("table: stat %s: %w", f.Key, err)
	}
	if info.Size != f.Bytes {
		return corrupt(f.Key, min(info.Size, f.Bytes), fmt.Sprintf("object is %d bytes, table state says %d", info.Size, f.Bytes), nil)
	}
	sc, err := Scan(ctx, st, s, ScanOptions{})
	if err != nil {
		return err
	}
	defer sc.Close()
	if !deep {
		// Open the fragment (size, footer, row count and every column's type
		// checked against the state) without decoding data pages.
		c, err := sc.open(f)
		if err != nil {
			return err
		}
		c.close()
		return nil
	}
	for sc.Next() {
	}
	return sc.Err()
}
