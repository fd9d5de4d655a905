package snapshot

import (
	"context"
	"slices"
	"sync"
)

// Retiring superseded images. Every write makes a new table state, and the
// first read of it caches a new image (a copy of the table's live rows);
// the images of the states it superseded stay cached until the LRU budget
// pushes them out. Under a stream of writes the cache therefore fills with
// stale copies of the same table — hundreds of MB of pointers on the peer
// graph — and every garbage collection marks all of them. The handle keeps
// instead the imagesKept most recently assembled images per (schema,
// table) and drops older ones from the cache: a reader that still wants
// one re-assembles it from the cached fragment images (image.go),
// which costs what the first read after a write costs anyway. Branches and
// pinned snapshots read alternately stay cached as long as they are among
// the last imagesKept.
const imagesKept = 4

// imageRing is the list of the last assembled image keys of one table,
// kept as a (small) cache entry of its own: if the LRU drops it, older
// images are simply left to the LRU as before.
type imageRing struct {
	mu   sync.Mutex
	keys []string
}

// recentImages returns the keys of the recently assembled images of tk in
// this snapshot's schema, newest first.
func (s *Snapshot) recentImages(tk string) []string {
	v, ok := s.l.cache.Get("exec/imagering/" + s.c.Schema + "/" + tk)
	if !ok {
		return nil
	}
	r := v.(*imageRing)
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.keys)
	slices.Reverse(out)
	return out
}

// retireImages records that the image of tk in this snapshot was just
// assembled and removes from the cache the images of the same table that
// are no longer among the imagesKept most recent.
func (s *Snapshot) retireImages(ctx context.Context, tk string) {
	v, err := s.l.cache.GetOrLoad(ctx, "exec/imagering/"+s.c.Schema+"/"+tk, func(context.Context) (any, int64, error) {
		return &imageRing{}, 256, nil
	})
	if err != nil {
		return
	}
	r := v.(*imageRing)
	key := s.ImageKey(tk)
	r.mu.Lock()
	r.keys = slices.DeleteFunc(r.keys, func(k string) bool { return k == key })
	r.keys = append(r.keys, key)
	var drop []string
	if n := len(r.keys) - imagesKept; n > 0 {
		drop = slices.Clone(r.keys[:n])
		r.keys = slices.Delete(r.keys, 0, n)
	}
	r.mu.Unlock()
	for _, k := range drop {
		s.l.cache.Remove(k)
	}
}
