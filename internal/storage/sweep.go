package storage

import (
	"context"
	"time"
)

// TempSweeper is the optional capability of stores whose puts can leave a
// temporary object behind when a writer dies mid-put (the local backend's
// TempPrefix files). Stores whose puts are atomic (memory, S3) have nothing
// to sweep and need not implement it; the Counting and Faulty wrappers
// forward it, so sweeping is counted and fault-injectable like every other
// request.
type TempSweeper interface {
	// SweepTemp finds the temporary leftovers last modified before
	// olderThan and, unless dryRun, removes them, reporting what it found.
	// A leftover that disappears concurrently is not an error. It is one
	// request of OpSweepTemp.
	SweepTemp(ctx context.Context, olderThan time.Time, dryRun bool) (TempSweep, error)
}

// TempSweep reports the leftovers one sweep found (and removed, unless it
// was a dry run).
type TempSweep struct {
	Files int
	Bytes int64
}

// SweepTemp sweeps st through its TempSweeper; a store without one has no
// leftovers and reports none, with no request.
func SweepTemp(ctx context.Context, st Store, olderThan time.Time, dryRun bool) (TempSweep, error) {
	if s, ok := st.(TempSweeper); ok {
		return s.SweepTemp(ctx, olderThan, dryRun)
	}
	return TempSweep{}, nil
}

// SweepTemp implements TempSweeper (one OpSweepTemp request; Bytes are the
// leftovers' sizes).
func (c *Counting) SweepTemp(ctx context.Context, olderThan time.Time, dryRun bool) (TempSweep, error) {
	sw, err := SweepTemp(ctx, c.inner, olderThan, dryRun)
	c.add(OpSweepTemp, int(sw.Bytes))
	return sw, err
}

// SweepTemp implements TempSweeper (op "sweep_temp", key "").
func (f *Faulty) SweepTemp(ctx context.Context, olderThan time.Time, dryRun bool) (TempSweep, error) {
	if err := f.check(ctx, OpSweepTemp, "", Before); err != nil {
		return TempSweep{}, err
	}
	sw, err := SweepTemp(ctx, f.inner, olderThan, dryRun)
	if err != nil {
		return sw, err
	}
	return sw, f.check(ctx, OpSweepTemp, "", After)
}
