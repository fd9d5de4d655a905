package storage

import (
	"bytes"
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/cache"
)

// CacheOptions configure a Cached store.
type CacheOptions struct {
	// Immutable reports whether the object under key never changes once
	// written (Omnigraph: everything but branch refs and the format stamp).
	// Only immutable objects are cached; every other request goes through.
	Immutable func(key string) bool
	// MemBytes bounds the in-memory tier (0 = 64 MiB, < 0 = none).
	MemBytes int64
	// Disk, if set, is the shared on-disk tier (see DiskCache).
	Disk *DiskCache
	// Namespace separates stores sharing one DiskCache (e.g. the store's
	// URI): the same key in two namespaces is two entries.
	Namespace string
	// WholeObjectBytes: OpenReadAt of an immutable object at most this big
	// fetches it whole with one GET and caches it; bigger objects are read
	// by ranges, each range cached (0 = 8 MiB).
	WholeObjectBytes int64
}

// Cached is a Store decorator for remote stores: immutable objects (and
// their metadata, and ranges of them) are cached by name in memory and,
// optionally, in a local disk directory shared by processes, so a warm
// handle — or a second cold process — does not download them again.
//
// Objects are cached by key alone: an immutable key names one content for
// ever. Writes go through, and what this process wrote enters the memory
// tier (write-through), so a writer never downloads its own objects. Delete of an immutable key drops it from the memory tier;
// other processes' tiers may still hold it, which is harmless because the
// key is never reused for other bytes.
type Cached struct {
	wrapper
	o   CacheOptions
	mem *cache.Cache[cachedValue]
}

type cachedValue struct {
	info Info
	data []byte // nil for a metadata-only entry
}

var (
	_ Store        = (*Cached)(nil)
	_ ReadAtOpener = (*Cached)(nil)
)

// NewCached wraps inner.
func NewCached(inner Store, o CacheOptions) *Cached {
	if o.Immutable == nil {
		o.Immutable = func(string) bool { return false }
	}
	if o.MemBytes == 0 {
		o.MemBytes = 64 << 20
	}
	if o.WholeObjectBytes == 0 {
		o.WholeObjectBytes = 8 << 20
	}
	return &Cached{wrapper: wrapper{inner}, o: o, mem: cache.New[cachedValue](o.MemBytes)}
}

// entry names: "o:" whole object, "i:" metadata, "r:<off>:<len>:" a range.
func objName(key string) string                 { return "o:" + key }
func infoName(key string) string                { return "i:" + key }
func rangeName(key string, off, n int64) string { return fmt.Sprintf("r:%d:%d:%s", off, n, key) }

// lookup finds name in memory, then on disk (promoting it to memory).
func (c *Cached) lookup(name string) (cachedValue, bool) {
	if v, ok := c.mem.Get(name); ok {
		return v, true
	}
	if c.o.Disk == nil {
		return cachedValue{}, false
	}
	info, data, ok := c.o.Disk.get(c.o.Namespace, name)
	if !ok {
		return cachedValue{}, false
	}
	v := cachedValue{info: info, data: data}
	c.mem.Add(name, v, int64(len(data))+256)
	return v, true
}

func (c *Cached) store(name string, v cachedValue) {
	c.mem.Add(name, v, int64(len(v.data))+256)
	if c.o.Disk != nil {
		c.o.Disk.put(c.o.Namespace, name, v.info, v.data)
	}
}

// Get implements Store.
func (c *Cached) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if !c.o.Immutable(key) || ValidateKey(key) != nil {
		return c.inner.Get(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, opErr(OpGet, key, err)
	}
	if v, ok := c.lookup(objName(key)); ok {
		return bytes.Clone(v.data), v.info, nil
	}
	data, info, err := c.inner.Get(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	c.store(objName(key), cachedValue{info: info, data: bytes.Clone(data)})
	return data, info, nil
}

// GetRange implements Store.
func (c *Cached) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if !c.o.Immutable(key) || ValidateKey(key) != nil || off < 0 || length < 0 {
		return c.inner.GetRange(ctx, key, off, length)
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	if v, ok := c.lookup(objName(key)); ok {
		return bytes.Clone(clipRange(v.data, off, length)), nil
	}
	if v, ok := c.lookup(rangeName(key, off, length)); ok {
		return bytes.Clone(v.data), nil
	}
	data, err := c.inner.GetRange(ctx, key, off, length)
	if err != nil {
		return nil, err
	}
	c.store(rangeName(key, off, length), cachedValue{info: Info{Key: key}, data: bytes.Clone(data)})
	return data, nil
}

// Stat implements Store.
func (c *Cached) Stat(ctx context.Context, key string) (Info, error) {
	if !c.o.Immutable(key) || ValidateKey(key) != nil {
		return c.inner.Stat(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return Info{}, opErr(OpStat, key, err)
	}
	if v, ok := c.lookup(infoName(key)); ok {
		return v.info, nil
	}
	if v, ok := c.lookup(objName(key)); ok {
		return v.info, nil
	}
	info, err := c.inner.Stat(ctx, key)
	if err != nil {
		return Info{}, err
	}
	c.store(infoName(key), cachedValue{info: info})
	return info, nil
}

// Put implements Store. A written immutable object goes into the memory
// tier: the writer reads its own objects back without a request.
func (c *Cached) Put(ctx context.Context, key string, data []byte) (Info, error) {
	info, err := c.inner.Put(ctx, key, data)
	c.wrote(key, data, info, err)
	return info, err
}

// PutIfAbsent implements Store (write-through like Put; an object that
// already existed is not cached, its bytes may differ from ours).
func (c *Cached) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	info, err := c.inner.PutIfAbsent(ctx, key, data)
	c.wrote(key, data, info, err)
	return info, err
}

func (c *Cached) wrote(key string, data []byte, info Info, err error) {
	if err != nil || !c.o.Immutable(key) || info.ETag == "" {
		return
	}
	c.mem.Add(objName(key), cachedValue{info: info, data: bytes.Clone(data)}, int64(len(data))+256)
}

// PutIfMatch implements Store.
func (c *Cached) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	return c.inner.PutIfMatch(ctx, key, data, etag)
}

// List implements Store (never cached: it is how cleanup sees the truth).
func (c *Cached) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	return c.inner.List(ctx, prefix, startAfter, fn)
}

// Delete implements Store.
func (c *Cached) Delete(ctx context.Context, key string) error {
	err := c.inner.Delete(ctx, key)
	if err == nil && c.o.Immutable(key) {
		c.mem.Remove(objName(key))
		c.mem.Remove(infoName(key))
	}
	return err
}

// OpenReadAt implements ReadAtOpener. For an immutable object it costs, when
// nothing is cached, one Stat and then either one Get of the whole object
// (small objects) or one GetRange per ReadAt (each cached); when cached,
// nothing.
func (c *Cached) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if !c.o.Immutable(key) || ValidateKey(key) != nil {
		return OpenReadAt(ctx, c.inner, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(OpStat, key, err)
	}
	if v, ok := c.lookup(objName(key)); ok {
		return bytesReadAt{bytes.NewReader(v.data)}, nil
	}
	info, err := c.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if info.Size <= c.o.WholeObjectBytes {
		data, _, err := c.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		return bytesReadAt{bytes.NewReader(data)}, nil
	}
	return &rangeReader{ctx: ctx, s: c, key: key, size: info.Size}, nil // each range through the cache
}

// OpenReadAtSize implements SizedReadAtOpener: as OpenReadAt without the
// Stat. A small object comes whole with one GET (the reader's Size is then
// its real length, so a truncated object shows); a bigger one is read by
// cached ranges.
func (c *Cached) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	if !c.o.Immutable(key) || ValidateKey(key) != nil {
		return OpenReadAtSize(ctx, c.inner, key, size)
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(OpGet, key, err)
	}
	if v, ok := c.lookup(objName(key)); ok {
		return bytesReadAt{bytes.NewReader(v.data)}, nil
	}
	if size <= c.o.WholeObjectBytes {
		data, _, err := c.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		return bytesReadAt{bytes.NewReader(data)}, nil
	}
	return &rangeReader{ctx: ctx, s: c, key: key, size: size}, nil // each range through the cache
}
