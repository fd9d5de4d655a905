package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

var _ TempSweeper = (*Local)(nil)

// SweepTemp implements TempSweeper: it walks the root for TempPrefix files
// (left by writers killed between create and rename) modified before
// olderThan, and removes them unless dryRun. A live writer's temporary file
// is younger than any sensible grace period, so it is never touched.
func (l *Local) SweepTemp(ctx context.Context, olderThan time.Time, dryRun bool) (TempSweep, error) {
	var sw TempSweep
	if err := ctx.Err(); err != nil {
		return sw, opErr(OpSweepTemp, "", err)
	}
	err := filepath.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed concurrently
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !IsTemp(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(olderThan) {
			return nil // gone already, or still young
		}
		if !dryRun {
			if err := os.Remove(p); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
		}
		sw.Files++
		sw.Bytes += info.Size()
		return nil
	})
	return sw, opErr(OpSweepTemp, "", err)
}
