package exec

// skelRows holds a load's skeleton images — the id, and for an edge src
// and dst, of every kept entity, by staging position — without a pointer
// in it: the strings' bytes one after another in one byte slice, and per
// image its offset and three lengths. A bulk load keeps a million of these
// for a million nodes; as []Row (56 bytes with four pointer words, plus a
// separately allocated id string each) the collector marked every one of
// them on each of its cycles, and the slice's growth copied them with
// write barriers. Validate takes []Row: images builds that once, after
// reading, with every string a view of one copy of the bytes.
// TestSkelRowsMatchRows pins it against a []Row built by hand.
type skelRows struct {
	bytes []byte
	refs  []skelRef
	rows  []Row // images' result, nil until asked and after a change
}

// skelRef locates one image in skelRows.bytes: id, src and dst, in that
// order, from off.
type skelRef struct {
	off          uint64
	id, src, dst uint32
}

// len is the number of images.
func (k *skelRows) len() int { return len(k.refs) }

// add appends an image at position len().
func (k *skelRows) add(id, src, dst string) {
	if n := len(k.refs); n == cap(k.refs) && n >= 1024 {
		k.refs = append(make([]skelRef, 0, 2*n), k.refs...) // doubled, not ~1.25×
	}
	k.refs = append(k.refs, k.ref(id, src, dst))
	k.rows = nil
}

// set replaces the image at pos (its old bytes stay, unreferenced: a
// merge load's repeated id, rare).
func (k *skelRows) set(pos int, id, src, dst string) {
	k.refs[pos] = k.ref(id, src, dst)
	k.rows = nil
}

func (k *skelRows) ref(id, src, dst string) skelRef {
	r := skelRef{off: uint64(len(k.bytes)), id: uint32(len(id)), src: uint32(len(src)), dst: uint32(len(dst))}
	if int(r.id) != len(id) || int(r.src) != len(src) || int(r.dst) != len(dst) {
		panic("exec: a skeleton id or endpoint of 4 GiB or more") // far beyond a line (DefaultMaxLineBytes)
	}
	if n := len(k.bytes); cap(k.bytes)-n < len(id)+len(src)+len(dst) && n >= 1<<16 {
		k.bytes = append(make([]byte, 0, 2*n+len(id)+len(src)+len(dst)), k.bytes...)
	}
	k.bytes = append(k.bytes, id...)
	k.bytes = append(k.bytes, src...)
	k.bytes = append(k.bytes, dst...)
	return r
}

// src is the source of the image at pos.
func (k *skelRows) src(pos int) string {
	r := k.refs[pos]
	a := r.off + uint64(r.id)
	return string(k.bytes[a : a+uint64(r.src)])
}

// images returns the images as rows (ID, Src, Dst; Values nil), built
// once until the next change. The rows share one copy of the bytes.
func (k *skelRows) images() []Row {
	if k.rows != nil || len(k.refs) == 0 {
		return k.rows
	}
	all := string(k.bytes)
	rows := make([]Row, len(k.refs))
	for i, r := range k.refs {
		a := r.off
		b := a + uint64(r.id)
		c := b + uint64(r.src)
		rows[i] = Row{ID: all[a:b], Src: all[b:c], Dst: all[c : c+uint64(r.dst)]}
	}
	k.rows = rows
	return rows
}
