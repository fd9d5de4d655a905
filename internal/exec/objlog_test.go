package exec

import (
	"context"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// objLog is a Store decorator recording, per object class (objClass),
// whole-object reads and ranged reads with their bytes, so a cost test
// can say which objects a query read and how (not only how much). It
// forwards random-access opens, counting each ReadAt as a ranged read.
type objLog struct {
	storage.Store
	mu  sync.Mutex
	log map[string]*objCost
}

type objCost struct {
	Gets, Ranges, Bytes int64
	Keys                map[string]bool
}

// String summarises a class: gets, ranged reads, bytes, objects.
func (c objCost) String() string {
	return fmt.Sprintf("%d get/%d range/%d B/%d obj", c.Gets, c.Ranges, c.Bytes, len(c.Keys))
}

func newObjLog(inner storage.Store) *objLog { return &objLog{Store: inner, log: map[string]*objCost{}} }

// objClass names the kind of object key is: "fts", "ivf", "data"
// (fragments), "dv", "idx" (key index), "fidx" (fragment id index) or "meta" (states, commits, refs).
func objClass(key string) string {
	switch ext := path.Ext(key); {
	case ext == ".fts" || ext == ".ivf" || ext == ".idx" || ext == ".fidx":
		return ext[1:]
	case strings.Contains(key, "/data/"):
		return "data"
	case ext == ".dv":
		return "dv"
	}
	return "meta"
}

func (s *objLog) add(key string, get bool, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.log[objClass(key)]
	if c == nil {
		c = &objCost{Keys: map[string]bool{}}
		s.log[objClass(key)] = c
	}
	if get {
		c.Gets++
	} else {
		c.Ranges++
	}
	c.Bytes += int64(n)
	c.Keys[key] = true
}

// take returns the log so far and clears it.
func (s *objLog) take() map[string]objCost {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]objCost{}
	for k, v := range s.log {
		out[k] = objCost{v.Gets, v.Ranges, v.Bytes, maps.Clone(v.Keys)}
	}
	clear(s.log)
	return out
}

func (s *objLog) Get(ctx context.Context, key string) ([]byte, storage.Info, error) {
	b, info, err := s.Store.Get(ctx, key)
	s.add(key, true, len(b))
	return b, info, err
}

func (s *objLog) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	b, err := s.Store.GetRange(ctx, key, off, length)
	s.add(key, false, len(b))
	return b, err
}

func (s *objLog) OpenReadAt(ctx context.Context, key string) (storage.ReadAtCloser, error) {
	r, err := storage.OpenReadAt(ctx, s.Store, key)
	if err != nil {
		return nil, err
	}
	return &objLogReader{r, s, key}, nil
}

func (s *objLog) OpenReadAtSize(ctx context.Context, key string, size int64) (storage.ReadAtCloser, error) {
	r, err := storage.OpenReadAtSize(ctx, s.Store, key, size)
	if err != nil {
		return nil, err
	}
	return &objLogReader{r, s, key}, nil
}

type objLogReader struct {
	storage.ReadAtCloser
	s   *objLog
	key string
}

func (r *objLogReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ReadAtCloser.ReadAt(p, off)
	r.s.add(r.key, false, n)
	return n, err
}
