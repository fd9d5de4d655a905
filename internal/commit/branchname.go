package commit

import (
	"strings"
)

// MainBranch always exists; it is created by Init and can never be deleted.
const MainBranch = "main"

// ValidateBranchName checks the naming rules of spec/engine.md §1.6 before any
// storage effect: non-empty, no surrounding whitespace, "/"-separated
// segments each non-empty and made only of ASCII letters, digits, ".", "-" and
// "_"; no "..", no "\", and no ".lock" suffix. It does not reject "main"
// (which exists, so creating it fails with ErrBranchExists) and does not check
// prefix-disjointness (that needs the live branch list).
func ValidateBranchName(name string) error {
	bad := func(reason string) error {
		return &BranchError{Branch: name, Reason: reason, Err: ErrInvalidBranch}
	}
	switch {
	case name == "":
		return bad("empty")
	case strings.TrimSpace(name) != name:
		return bad("leading or trailing whitespace")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return bad("leading or trailing /")
	case strings.Contains(name, "//"):
		return bad("empty segment (//)")
	case strings.Contains(name, ".."):
		return bad("contains ..")
	case strings.HasSuffix(name, ".lock"):
		return bad("ends with .lock")
	case len(name) > 200:
		return bad("longer than 200 bytes")
	}
	for seg := range strings.SplitSeq(name, "/") { // no allocation: validated on every head read
		if seg == "." {
			// A lone "." segment would alias its parent in a filesystem path.
			return bad("segment is .")
		}
		for _, r := range seg {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
				r == '.' || r == '-' || r == '_'
			if !ok {
				return bad("only letters, digits, '.', '-', '_' and '/' are allowed")
			}
		}
	}
	return nil
}

// prefixRelated reports whether a and b cannot both be live because one is a
// path prefix of the other ("feature" and "feature/child"): their ref keys
// would need a file and a directory with one name on a filesystem backend.
func prefixRelated(a, b string) bool {
	return strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}
