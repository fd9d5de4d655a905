package storagetest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFileDurably is the raw floor a durable write is measured against:
// data written to dir/tmp and fsynced, renamed to dir/name unless the two
// are the same, and the directory fsynced — the local backend's recipe
// with nothing of the store around it. Benchmarks print their figures next
// to it in the same run.
func WriteFileDurably(tb testing.TB, dir, tmp, name string, data []byte) {
	tb.Helper()
	f, err := os.Create(filepath.Join(dir, tmp))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	if tmp != name {
		if err := os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, name)); err != nil {
			tb.Fatal(err)
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		tb.Fatal(err)
	}
	d.Close()
}
