package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Record is one parsed line of a graph-batch JSONL stream: a *NodeRecord or
// an *EdgeRecord.
type Record interface {
	// InputLine is the 1-based line number the record was read from.
	InputLine() int
}

// NodeRecord is a node line: {"type": T, "data": {...}}.
type NodeRecord struct {
	Type string // exact node type name
	// ID is the node id: the canonical @key id for keyed types, the
	// explicit data.id for unkeyed types, or "" when the caller must
	// generate one (a ULID).
	ID string
	// Values holds every declared property of Type (nil where absentParam or
	// null), converted per ConvertJSON; a nil map for a type without
	// properties. Nil when Cells holds them.
	Values map[string]any
	// Cells, for a type that takes the typed path (jsonl_typed.go), holds
	// the properties unboxed in declared order instead of Values; strings
	// may be views of the input block, to be copied if kept.
	Cells []table.Cell
	Line  int
}

// InputLine implements Record.
func (r *NodeRecord) InputLine() int { return r.Line }

// EdgeRecord is an edge line: {"edge": E, "from": src, "to": dst, "data": {...}}.
type EdgeRecord struct {
	Type string // canonical edge type name (input is matched case-insensitively)
	// ID is the explicit data.id, or "" when the caller must generate one.
	ID     string
	From   string // source node id
	To     string // destination node id
	Values map[string]any
	Cells  []table.Cell // as NodeRecord.Cells
	Line   int
	// toStaged: a load found To staged before it staged this record
	// (loadStream.ahead); a staged node stays staged.
	toStaged bool
}

// InputLine implements Record.
func (r *EdgeRecord) InputLine() int { return r.Line }

// DefaultMaxLineBytes bounds one JSONL line. It matches the per-type staged
// data limit of a load (32 MiB): a longer line could never be admitted.
const DefaultMaxLineBytes = 32 << 20

// maxJSONDepth bounds nesting inside a line; valid records need at most 4
// levels (record, data, list or vector, element), so this only stops
// hostile input from driving deep recursion.
const maxJSONDepth = 32

// reservedFields are physical column names that input must not set.
var reservedFields = map[string]bool{
	"src": true, "dst": true,
	"_rowid": true, "_rowaddr": true, "_rowoffset": true,
	"_row_created_at_version": true, "_row_last_updated_at_version": true,
}

// ReaderOptions configures a Reader.
type ReaderOptions struct {
	// MaxLineBytes bounds one line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
}

// Reader reads the strict graph-batch JSONL format (§4.1 of the language
// spec, §1.4 of the surfaces spec) one record at a time. It keeps at most
// one line in memory, so a stream of any length is read in bounded memory.
//
// Each returned record has passed the envelope rules, value conversion and
// the per-row constraints (CheckNodeRow / CheckEdgeRow); cross-row checks
// (uniqueness, referential integrity, cardinality) are Validate's job.
// A line that fails returns an *InputError and reading may continue with
// the next line; I/O errors are returned as is and are final.
type Reader struct {
	cat     *schema.Catalog
	br      *bufio.Reader
	maxLine int
	line    int
	buf     []byte
	err     error // sticky I/O error or io.EOF
	// names interns the object keys and type names a record can hold
	// (envelope fields, type and property names of the catalog), so that
	// parsing them allocates nothing (lineParser.name).
	names map[string]string
	// nodeShapes and edgeShapes are the types whose records take the
	// typed path, by name (typedShapes); set for the parse workers of
	// eachRecord only, so Next returns value maps.
	nodeShapes, edgeShapes map[string]*recShape
	// alias and the record arenas are set for the parse workers of
	// eachRecord only (their lines are never overwritten): from/to strings
	// may point into the line (lineParser.alias), and records are carved
	// from one slice per block instead of one allocation each.
	alias bool
	// keys and arena are the line parser's scratch, kept across lines.
	keys   []string
	arena  []jsonMember
	last   string
	recent recentNames
	nodes  []NodeRecord
	edges  []EdgeRecord
	// cells is the typed records' cell arena, refilled cellsPerBlock at a
	// time (0: a slice per record).
	cells         []table.Cell
	cellsPerBlock int
	// The last node and edge type a record named, and their shapes.
	lastNode      *schema.NodeType
	lastNodeShape *recShape
	lastEdge      *schema.EdgeType
	lastEdgeShape *recShape
}

// NewReader returns a Reader over r for catalog cat.
func NewReader(r io.Reader, cat *schema.Catalog, opts ReaderOptions) *Reader {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &Reader{cat: cat, br: bufio.NewReaderSize(r, 64<<10), maxLine: max, names: recordNames(cat)}
}

// recordNames returns the interning table of a Reader over cat.
func recordNames(cat *schema.Catalog) map[string]string {
	names := map[string]string{}
	add := func(s string) { names[s] = s }
	for _, s := range []string{"type", "edge", "from", "to", "data", "id"} {
		add(s)
	}
	if cat == nil {
		return names
	}
	for _, nt := range cat.Nodes {
		add(nt.Name)
		for _, p := range nt.Props {
			add(p.Name)
		}
	}
	for _, et := range cat.Edges {
		add(et.Name)
		for _, p := range et.Props {
			add(p.Name)
		}
	}
	return names
}

// Line returns the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Next returns the next record, skipping blank lines, or io.EOF at the end
// of the stream.
func (r *Reader) Next(ctx context.Context) (Record, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return r.parseLine(line)
	}
}

// readLine returns the next line without its terminator, valid until the
// next read (a line that fits the reader's buffer is a view of it, not a
// copy). A line longer than maxLine is reported as an *InputError as soon
// as maxLine bytes of it have been read, and ends the stream.
func (r *Reader) readLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.buf = r.buf[:0]
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > r.maxLine+2 { // +2 for "\r\n"
			// Refused as soon as the limit is passed, without reading the
			// rest of the line (it may never end: /dev/zero, a stuck pipe).
			// The stream cannot be resynchronized, so the error is final.
			r.line++
			ie := &InputError{Line: r.line, Msg: fmt.Sprintf("line exceeds %d bytes", r.maxLine)}
			r.err = ie
			return nil, ie
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			r.buf = append(r.buf, chunk...)
			continue
		}
		line = chunk
		if len(r.buf) > 0 {
			r.buf = append(r.buf, chunk...)
			line = r.buf
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
				return nil, err
			}
			r.err = io.EOF
			if len(chunk) == 0 && len(r.buf) == 0 {
				return nil, io.EOF
			}
		}
		break
	}
	r.line++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > r.maxLine {
		return nil, &InputError{Line: r.line, Msg: fmt.Sprintf("line exceeds %d bytes", r.maxLine)}
	}
	return line, nil
}

// jsonMember is one JSON object jsonMember, kept in input order so that the first
// offending field of a line is always the one reported.
type jsonMember struct {
	key string
	// A string value is str (isStr set, val nil) and a number's literal is
	// str (isNum set): unboxed, so that the envelope's strings and the
	// typed conversion of a record (typedValues) cost no allocation beyond
	// what they keep. Any other value is val.
	val   any
	str   string
	isStr bool
	isNum bool
	// view: str points into the line (a number's literal always; a data
	// string under lineParser.alias). It is valid while the line is, so
	// value copies it; the typed path reads it in place.
	view bool
}

// value returns the member's value in lineParser's value model.
func (m *jsonMember) value() any {
	s := m.str
	if m.view {
		s = strings.Clone(s)
	}
	switch {
	case m.isStr:
		return s
	case m.isNum:
		return json.Number(s)
	}
	return m.val
}

func (r *Reader) errorf(field, format string, args ...any) *InputError {
	return &InputError{Line: r.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) parseLine(line []byte) (Record, error) {
	if r.alias {
		if rec, ok, err := r.fastLine(line); ok {
			return rec, err
		}
	}
	return r.parseLineGeneral(line)
}

// parseLineGeneral is parseLine without the fast path for plain lines
// (fastLine).
func (r *Reader) parseLineGeneral(line []byte) (Record, error) {
	// keys has room for the depth of a valid record (maxJSONDepth is for
	// hostile input), so a line's path stack stays off the heap.
	p := lineParser{b: line, strictText: true, names: r.names, keys: r.keys[:0], alias: r.alias, arena: r.arena[:0], last: r.last}
	if r.names != nil {
		p.recent = &r.recent
	}
	defer func() { r.keys, r.arena, r.last = p.keys[:0], p.arena[:0], p.last }()
	members, kind, err := p.record()
	if err != nil {
		return nil, r.parseError(err)
	}
	if kind != "object" {
		return nil, r.errorf("", "expected a JSON object, got %s", kind)
	}
	p.skipSpace()
	if p.i < len(p.b) {
		return nil, r.errorf("", "unexpected data after the JSON object at column %d (one record per line)", p.i+1)
	}

	var typ, edge, from, to, data *jsonMember
	for i := range members {
		m := &members[i]
		switch m.key {
		case "type":
			typ = m
		case "edge":
			edge = m
		case "from":
			from = m
		case "to":
			to = m
		case "data":
			data = m
		}
	}
	switch {
	case typ != nil && edge != nil:
		return nil, r.errorf("", "record has both 'type' and 'edge'; expected exactly one")
	case typ == nil && edge == nil:
		return nil, r.errorf("", "expected 'type' or 'edge' field")
	}
	recKind := "node"
	if edge != nil {
		recKind = "edge"
	}
	for _, m := range members {
		allowed := m.key == "data" || (edge == nil && m.key == "type") ||
			(edge != nil && (m.key == "edge" || m.key == "from" || m.key == "to"))
		if !allowed {
			return nil, r.errorf(m.key, "unknown field '%s' for %s record", m.key, recKind)
		}
	}
	var dataMembers []jsonMember
	if data != nil {
		obj, ok := data.val.([]jsonMember)
		if !ok {
			return nil, r.errorf("data", "field 'data' must be an object, got %s", rawTypeName(data.value()))
		}
		dataMembers = obj
	}
	if typ != nil {
		if !typ.isStr {
			return nil, r.errorf("type", "field 'type' must be a string, got %s", rawTypeName(typ.value()))
		}
		return r.nodeRecord(typ.str, dataMembers)
	}
	if !edge.isStr {
		return nil, r.errorf("edge", "field 'edge' must be a string, got %s", rawTypeName(edge.value()))
	}
	name := edge.str
	// No pointers to locals here: they would move src and dst to the heap.
	ends := [2]*jsonMember{from, to}
	for i, key := range [2]string{"from", "to"} {
		if ends[i] == nil {
			return nil, r.errorf(key, "edge missing '%s'", key)
		}
		if !ends[i].isStr {
			return nil, r.errorf(key, "field '%s' must be a string node id, got %s", key, rawTypeName(ends[i].value()))
		}
	}
	return r.edgeRecord(name, from.str, to.str, dataMembers)
}

// dataValues converts the data members of a record against props; it
// returns the values (every declared property present, nil if absentParam) and
// the explicit data.id.
func (r *Reader) dataValues(kind, name string, props []*schema.Property, lookup func(string) (*schema.Property, bool), data []jsonMember) (map[string]any, *string, error) {
	// A type without properties gets no map: one allocation fewer per
	// edge of the usual property-less edge type (reading a nil map is
	// reading an empty one).
	var values map[string]any
	if len(props) > 0 {
		values = make(map[string]any, len(props))
	}
	for _, p := range props {
		values[p.Name] = nil
	}
	var id *string
	for _, m := range data {
		if m.key == "id" {
			field := "data.id"
			if !m.isStr {
				return nil, nil, r.errorf(field, "field 'data.id' must be a string, got %s", rawTypeName(m.value()))
			}
			s := m.str
			if m.view {
				s = strings.Clone(s) // kept as the record's id: no view of the block
			}
			if s == "" {
				// "" means "generate one" in records; an explicit empty id
				// would silently become a fresh ULID.
				return nil, nil, r.errorf(field, "field 'data.id' must not be empty")
			}
			id = &s
			continue
		}
		field := func() string { return "data." + m.key } // errors only: the concatenation allocates
		p, ok := lookup(m.key)
		if !ok {
			if reservedFields[m.key] {
				return nil, nil, r.errorf(field(), "reserved field '%s' for '%s:%s'", m.key, kind, name)
			}
			return nil, nil, r.errorf(field(), "unknown input field '%s' for '%s:%s'", m.key, kind, name)
		}
		if _, isObj := m.val.([]jsonMember); isObj {
			return nil, nil, &InputError{Line: r.line, Field: field(),
				Msg: fmt.Sprintf("property '%s' expects %s, got object", m.key, value.TypeName(p.Type))}
		}
		v, err := value.ConvertJSON(m.key, p.Type, m.value())
		if err != nil {
			return nil, nil, &InputError{Line: r.line, Field: field(), Msg: err.Error(), Err: err}
		}
		values[m.key] = v
	}
	return values, id, nil
}

// nodeType is cat.Node(name) with the typed shape, remembering the last
// answer: lines come in runs of one type.
func (r *Reader) nodeType(name string) (*schema.NodeType, *recShape, bool) {
	if r.lastNode != nil && r.lastNode.Name == name {
		return r.lastNode, r.lastNodeShape, true
	}
	nt, ok := r.cat.Node(name)
	if !ok {
		return nil, nil, false
	}
	r.lastNode, r.lastNodeShape = nt, r.nodeShapes[nt.Name]
	return nt, r.lastNodeShape, true
}

// edgeType is nodeType for edges (cat.Edge: an exact or case-insensitive
// match; only an exact one is remembered).
func (r *Reader) edgeType(name string) (*schema.EdgeType, *recShape, bool) {
	if r.lastEdge != nil && r.lastEdge.Name == name {
		return r.lastEdge, r.lastEdgeShape, true
	}
	et, ok := r.cat.Edge(name)
	if !ok {
		return nil, nil, false
	}
	if et.Name != name {
		return et, r.edgeShapes[et.Name], true
	}
	r.lastEdge, r.lastEdgeShape = et, r.edgeShapes[et.Name]
	return et, r.lastEdgeShape, true
}

func (r *Reader) nodeRecord(name string, data []jsonMember) (Record, error) {
	nt, sh, ok := r.nodeType(name)
	if !ok {
		return nil, r.errorf("type", "unknown node type '%s'", name)
	}
	if sh != nil {
		if cells, id, hasID, ok := r.typedValues(sh, data); ok {
			if sh.key >= 0 {
				key := cells[sh.key]
				if key.Kind == table.CellNull || (hasID && id != key.S) {
					goto general
				}
				id, hasID = key.S, true
			}
			rec := r.newNode()
			*rec = NodeRecord{Type: nt.Name, Cells: cells, Line: r.line}
			if hasID {
				rec.ID = strings.Clone(id) // kept: no view of the block
			}
			return rec, nil
		}
	}
general:
	values, explicitID, err := r.dataValues("node", nt.Name, nt.Props, nt.Prop, data)
	if err != nil {
		return nil, err
	}
	rec := r.newNode()
	*rec = NodeRecord{Type: nt.Name, Values: values, Line: r.line}
	if len(nt.Key) > 0 {
		for _, k := range nt.Key {
			if values[k] == nil {
				return nil, r.errorf("data."+k, "node %s missing @key property '%s'", nt.Name, k)
			}
		}
		canonical, err := nodeID(nt, values)
		if err != nil {
			var kv *schema.KeyValueError
			field := ""
			if errors.As(err, &kv) {
				field = "data." + kv.Prop
			}
			return nil, &InputError{Line: r.line, Field: field, Msg: err.Error(), Err: err}
		}
		if explicitID != nil && *explicitID != canonical {
			return nil, r.errorf("data.id", "node %s data.id '%s' does not match the canonical @key id '%s'", nt.Name, *explicitID, canonical)
		}
		rec.ID = canonical
	} else if explicitID != nil {
		rec.ID = *explicitID
	}
	if err := CheckNodeRow(nt, values); err != nil {
		return nil, r.rowError(err)
	}
	return rec, nil
}

// nodeID is nt.NodeID(values) without its allocations in the usual case,
// a single String or enum key: that id is the key value itself (§2.6).
func nodeID(nt *schema.NodeType, values map[string]any) (string, error) {
	if len(nt.Key) == 1 {
		if p, ok := nt.Prop(nt.Key[0]); ok && (p.Type.Kind == schema.KindString || p.Type.Kind == schema.KindEnum) {
			if s, ok := values[p.Name].(string); ok {
				return s, nil
			}
		}
	}
	return nt.NodeID(values)
}

func (r *Reader) edgeRecord(name, src, dst string, data []jsonMember) (Record, error) {
	et, sh, ok := r.edgeType(name)
	if !ok {
		return nil, r.errorf("edge", "unknown edge type '%s'", name)
	}
	if sh != nil {
		if cells, id, hasID, ok := r.typedValues(sh, data); ok {
			rec := r.newEdge()
			*rec = EdgeRecord{Type: et.Name, From: src, To: dst, Cells: cells, Line: r.line}
			if hasID {
				rec.ID = strings.Clone(id)
			}
			return rec, nil
		}
	}
	values, explicitID, err := r.dataValues("edge", et.Name, et.Props, et.Prop, data)
	if err != nil {
		return nil, err
	}
	rec := r.newEdge()
	*rec = EdgeRecord{Type: et.Name, From: src, To: dst, Values: values, Line: r.line}
	if explicitID != nil {
		rec.ID = *explicitID
	}
	if err := CheckEdgeRow(et, values); err != nil {
		return nil, r.rowError(err)
	}
	return rec, nil
}

// newNode returns a fresh record from the node arena, if there is room.
func (r *Reader) newNode() *NodeRecord { return carve(&r.nodes) }

// newEdge returns a fresh record from the edge arena, if there is room.
func (r *Reader) newEdge() *EdgeRecord { return carve(&r.edges) }

// carve returns the next zero element of the arena's spare capacity, or a
// new one when it has none (an arena never grows: its elements are held).
func carve[T any](arena *[]T) *T {
	a := *arena
	if len(a) < cap(a) {
		*arena = a[:len(a)+1]
		return &(*arena)[len(a)]
	}
	return new(T)
}

func (r *Reader) rowError(err error) error {
	ie := &InputError{Line: r.line, Msg: err.Error(), Err: err}
	var ce *ConstraintError
	if errors.As(err, &ce) && ce.Prop != "" {
		ie.Field = "data." + ce.Prop
	}
	return ie
}

// parseError turns a lineParser error into an *InputError.
func (r *Reader) parseError(err error) error {
	switch e := err.(type) {
	case *jsonSyntaxError:
		return &InputError{Line: r.line, Msg: fmt.Sprintf("invalid JSON at column %d: %s", e.Offset+1, e.Msg)}
	case *jsonDuplicateError:
		return &InputError{Line: r.line, Field: e.Path, Msg: e.Error()}
	case *jsonDepthError:
		return &InputError{Line: r.line, Field: e.Path, Msg: e.Error()}
	case *jsonTextError:
		return &InputError{Line: r.line, Field: e.Path, Msg: fmt.Sprintf("%s at column %d", e.Msg, e.Offset+1), Err: ErrInvalidText}
	}
	return &InputError{Line: r.line, Msg: err.Error(), Err: err}
}

func membersToMap(ms []jsonMember) map[string]any {
	m := make(map[string]any, len(ms))
	for _, x := range ms {
		if obj, ok := x.val.([]jsonMember); ok {
			m[x.key] = membersToMap(obj)
		} else {
			m[x.key] = x.value()
		}
	}
	return m
}

func rawTypeName(v any) string {
	if _, ok := v.([]jsonMember); ok {
		return "object"
	}
	return value.JSONTypeName(v)
}
