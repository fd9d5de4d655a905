package storage

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// DiskCache is a bounded directory of cached immutable objects, shared
// safely by any number of processes:
//
//   - an entry is one file <dir>/v1/<2 hex>/<sha256 of namespace+name>,
//     written to a temp file and renamed into place, so a reader sees a whole
//     entry or none;
//   - each entry starts with a JSON header naming its namespace, name, size
//     and Info; a header that does not match (a hash collision, a torn or
//     foreign file) is a miss and the file is removed;
//   - the directory is bounded: when a process has added enough to pass the
//     bound, it deletes the least recently used entries (by modification
//     time, which a hit refreshes) until the total is under 90% of it.
//     Deleting an entry another process is reading is safe on POSIX.
//
// Failures of the cache (full disk, permissions) never fail a request: the
// entry is simply not cached.
type DiskCache struct {
	dir      string
	maxBytes int64

	mu    sync.Mutex
	total int64 // estimate of the directory's size; -1 until first scanned
}

// DefaultDiskCacheBytes bounds a disk cache when no size is given (1 GiB).
const DefaultDiskCacheBytes = 1 << 30

// OpenDiskCache opens (creating) the cache directory dir, bounded to
// maxBytes (0 = DefaultDiskCacheBytes).
func OpenDiskCache(dir string, maxBytes int64) (*DiskCache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultDiskCacheBytes
	}
	root := filepath.Join(dir, "v1")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("storage: cache directory %q: %w", dir, err)
	}
	return &DiskCache{dir: root, maxBytes: maxBytes, total: -1}, nil
}

// Dir returns the cache's directory.
func (d *DiskCache) Dir() string { return filepath.Dir(d.dir) }

type diskHeader struct {
	NS      string    `json:"ns"`
	Name    string    `json:"name"`
	Len     int64     `json:"len"`
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ETag    string    `json:"etag"`
	ModTime time.Time `json:"mtime"`
}

func (d *DiskCache) path(ns, name string) string {
	sum := sha256.Sum256([]byte(ns + "\x00" + name))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(d.dir, h[:2], h)
}

func (d *DiskCache) get(ns, name string) (Info, []byte, bool) {
	p := d.path(ns, name)
	f, err := os.Open(p)
	if err != nil {
		return Info{}, nil, false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line, err := br.ReadBytes('\n')
	if err != nil {
		os.Remove(p)
		return Info{}, nil, false
	}
	var h diskHeader
	if json.Unmarshal(line, &h) != nil || h.NS != ns || h.Name != name || h.Len < 0 {
		os.Remove(p)
		return Info{}, nil, false
	}
	data := make([]byte, h.Len)
	if _, err := io.ReadFull(br, data); err != nil {
		os.Remove(p)
		return Info{}, nil, false
	}
	if _, err := br.ReadByte(); err != io.EOF {
		os.Remove(p)
		return Info{}, nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // LRU order for eviction
	return Info{Key: h.Key, Size: h.Size, ETag: h.ETag, ModTime: h.ModTime}, data, true
}

func (d *DiskCache) put(ns, name string, info Info, data []byte) {
	p := d.path(ns, name)
	if _, err := os.Stat(p); err == nil {
		return // another process cached it
	}
	hdr, err := json.Marshal(diskHeader{NS: ns, Name: name, Len: int64(len(data)),
		Key: info.Key, Size: info.Size, ETag: info.ETag, ModTime: info.ModTime})
	if err != nil {
		return
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%s%016x", TempPrefix, rand.Uint64()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	var buf bytes.Buffer
	buf.Write(hdr)
	buf.WriteByte('\n')
	_, werr := buf.WriteTo(f)
	if werr == nil {
		_, werr = f.Write(data)
	}
	// No fsync: after a crash a torn entry fails its header/length check.
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp)
		return
	}
	d.added(int64(len(hdr) + 1 + len(data)))
}

// added accounts n new bytes and evicts when over the bound.
func (d *DiskCache) added(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.total < 0 {
		d.total = d.scanSize()
	} else {
		d.total += n
	}
	if d.total > d.maxBytes {
		d.total = d.evict(d.maxBytes * 9 / 10)
	}
}

func (d *DiskCache) scanSize() int64 {
	var total int64
	_ = filepath.WalkDir(d.dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// evict deletes least recently used entries until the directory holds at
// most target bytes, and returns what it holds then. Stale temp files
// (older than a minute: their writer died) go first.
func (d *DiskCache) evict(target int64) int64 {
	type ent struct {
		path  string
		size  int64
		mtime time.Time
	}
	var ents []ent
	var total int64
	staleTmp := time.Now().Add(-time.Minute)
	_ = filepath.WalkDir(d.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		if IsTemp(e.Name()) {
			if fi.ModTime().Before(staleTmp) {
				os.Remove(p)
			}
			return nil
		}
		ents = append(ents, ent{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	})
	slices.SortFunc(ents, func(a, b ent) int { return a.mtime.Compare(b.mtime) })
	for _, e := range ents {
		if total <= target {
			break
		}
		if os.Remove(e.path) == nil {
			total -= e.size
		}
	}
	return total
}
