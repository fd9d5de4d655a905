package schema

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrNoKey is returned by NodeType.NodeID for a node type without @key;
// such nodes take an explicit id or a generated ULID instead.
var ErrNoKey = errors.New("node type has no @key")

// KeyValueError reports a @key value NodeID cannot render.
type KeyValueError struct {
	Type   string // node type name
	Prop   string // key property name
	Reason string
}

func (e *KeyValueError) Error() string {
	return fmt.Sprintf("node %s @key property '%s': %s", e.Type, e.Prop, e.Reason)
}

// NodeID returns the canonical id of a keyed node from its property values
// (§2.6 of the language spec). A single-property key renders as a plain
// string; a composite key as a compact JSON array of the member strings,
// ordered by stable property id.
//
// values use Go types: string (String, enum), bool, int64 (I32/I64), uint64
// (U32/U64), float64 (F32/F64; F32 is rendered at 32-bit width), int32 days
// since the epoch (Date) and int64 ms since the epoch (DateTime). It fails
// with ErrNoKey when the type has no @key, and with a *KeyValueError when a
// key value is missing, null, of the wrong Go type or a non-finite float.
func (n *NodeType) NodeID(values map[string]any) (string, error) {
	if len(n.Key) == 0 {
		return "", fmt.Errorf("node %s: %w", n.Name, ErrNoKey)
	}
	props := make([]*Property, 0, len(n.Key))
	for _, name := range n.Key {
		p, ok := n.Prop(name)
		if !ok {
			// Compile guarantees key members exist; reaching this is a bug.
			panic(fmt.Sprintf("schema: key property %s.%s missing from catalog", n.Name, name))
		}
		props = append(props, p)
	}
	// Re-sort on every call: ids, not declaration order, define the member
	// order, and ids are the identity that survives renames.
	sort.SliceStable(props, func(i, j int) bool { return props[i].ID < props[j].ID })
	parts := make([]string, len(props))
	for i, p := range props {
		v, ok := values[p.Name]
		if !ok || v == nil {
			return "", &KeyValueError{Type: n.Name, Prop: p.Name, Reason: "missing"}
		}
		s, err := renderKeyValue(p.Type, v)
		if err != nil {
			return "", &KeyValueError{Type: n.Name, Prop: p.Name, Reason: err.Error()}
		}
		parts[i] = s
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		writeQuoted(&b, s, &jsonEscapes)
	}
	b.WriteByte(']')
	return b.String(), nil
}

// SingleKeyID is NodeID for a type whose @key is one property, given that
// property's value: the same id and errors, without building a map of
// values, and for a String or enum key without allocating (a warm key
// lookup renders its parameter on every query). A type whose key is not
// one property answers as NodeID does when only its first member (or,
// without a key, nothing) is given.
func (n *NodeType) SingleKeyID(v any) (string, error) {
	if len(n.Key) != 1 {
		values := map[string]any{}
		if len(n.Key) > 0 {
			values[n.Key[0]] = v
		}
		return n.NodeID(values)
	}
	p, ok := n.Prop(n.Key[0])
	if !ok {
		panic(fmt.Sprintf("schema: key property %s.%s missing from catalog", n.Name, n.Key[0]))
	}
	if v == nil {
		return "", &KeyValueError{Type: n.Name, Prop: p.Name, Reason: "missing"}
	}
	s, err := renderKeyValue(p.Type, v)
	if err != nil {
		return "", &KeyValueError{Type: n.Name, Prop: p.Name, Reason: err.Error()}
	}
	return s, nil
}

func renderKeyValue(t Type, v any) (string, error) {
	wrongType := func() error {
		return fmt.Errorf("value of Go type %T is not valid for %s", v, t)
	}
	switch t.Kind {
	case KindString, KindEnum:
		s, ok := v.(string)
		if !ok {
			return "", wrongType()
		}
		return s, nil
	case KindBool:
		b, ok := v.(bool)
		if !ok {
			return "", wrongType()
		}
		return strconv.FormatBool(b), nil
	case KindI32, KindI64, KindDate, KindDateTime:
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case int32:
			return strconv.FormatInt(int64(x), 10), nil
		case int:
			return strconv.FormatInt(int64(x), 10), nil
		}
		return "", wrongType()
	case KindU32, KindU64:
		switch x := v.(type) {
		case uint64:
			return strconv.FormatUint(x, 10), nil
		case uint32:
			return strconv.FormatUint(uint64(x), 10), nil
		}
		return "", wrongType()
	case KindF32, KindF64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			return "", wrongType()
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", errors.New("value must be finite")
		}
		if f == 0 {
			return "0", nil // folds -0 into 0: both are the same key
		}
		if t.Kind == KindF32 {
			return strconv.FormatFloat(float64(float32(f)), 'f', -1, 32), nil
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	// Compile rejects keys on lists, vectors and blobs.
	return "", wrongType()
}
