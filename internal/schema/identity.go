package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Identity is the part of an accepted schema that the .pg text cannot say:
// the stable, opaque id of every node and edge type. A type's id defaults to
// its table key ("node:Person"), is kept across a rename (`@rename_from`),
// and is never reused: a type dropped and declared again gets a fresh id, so
// history and change consumers can tell the two incarnations apart.
//
// Only ids that differ from the default are stored, so a graph whose types
// were never renamed or re-added has an empty Identity and its accepted
// source carries no trailer at all (byte-identical to what init stores).
type Identity struct {
	// Types maps a table key to its id where the two differ.
	Types map[string]string `json:"types,omitempty"`
	// Retired lists the ids of dropped types; they are never minted again.
	Retired []string `json:"retired,omitempty"`
}

// TypeID returns the stable id of the type with table key tk.
func (id Identity) TypeID(tk string) string {
	if v, ok := id.Types[tk]; ok {
		return v
	}
	return tk
}

// IsZero reports whether the identity holds nothing beyond the defaults.
func (id Identity) IsZero() bool { return len(id.Types) == 0 && len(id.Retired) == 0 }

// identityMarker starts the trailer line that stores an Identity inside the
// accepted schema source. It is a .pg comment, so the stored source still
// compiles as written and older readers simply ignore it.
const identityMarker = "// omnigraph:identity "

// SplitIdentity separates an accepted schema source into the user's .pg text
// and the Identity its trailer records (zero when there is none).
func SplitIdentity(src string) (string, Identity, error) {
	i := strings.LastIndex(src, "\n"+identityMarker)
	if i < 0 {
		if strings.HasPrefix(src, identityMarker) {
			i = -1
		} else {
			return src, Identity{}, nil
		}
	}
	line := strings.TrimSuffix(src[i+1+len(identityMarker):], "\n")
	var id Identity
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&id); err != nil || strings.Contains(line, "\n") {
		return "", Identity{}, fmt.Errorf("schema: unreadable identity trailer in the accepted schema: %v", err)
	}
	return src[:i+1], id, nil
}

// JoinIdentity appends id to a .pg source as its trailer (nothing when id is
// zero). The encoding is canonical: equal identities give equal bytes.
func JoinIdentity(src string, id Identity) string {
	if id.IsZero() {
		return src
	}
	slices.Sort(id.Retired)
	b, _ := json.Marshal(id) // maps marshal with sorted keys
	if !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	return src + identityMarker + string(b) + "\n"
}

// mint returns a fresh id for a new type with table key tk: the default
// unless that is retired or taken, else tk~2, tk~3, ...
func mint(tk string, taken map[string]bool) string {
	if !taken[tk] {
		return tk
	}
	for n := 2; ; n++ {
		c := tk + "~" + strconv.Itoa(n)
		if !taken[c] {
			return c
		}
	}
}
