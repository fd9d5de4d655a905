package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Environment variables of the bearer token sources (spec/surfaces.md §2.2).
const (
	EnvBearerToken      = "OMNIGRAPH_SERVER_BEARER_TOKEN"
	EnvBearerTokensJSON = "OMNIGRAPH_SERVER_BEARER_TOKENS_JSON"
	EnvBearerTokensFile = "OMNIGRAPH_SERVER_BEARER_TOKENS_FILE"
	EnvBearerTokensAWS  = "OMNIGRAPH_SERVER_BEARER_TOKENS_AWS_SECRET"
	// DefaultActor is the actor of OMNIGRAPH_SERVER_BEARER_TOKEN.
	DefaultActor = "default"
)

// TokensFromEnv reads the bearer tokens of spec §2.2 once: the single
// OMNIGRAPH_SERVER_BEARER_TOKEN (actor "default") combined with either the
// JSON object file named by OMNIGRAPH_SERVER_BEARER_TOKENS_FILE or, without
// a file, OMNIGRAPH_SERVER_BEARER_TOKENS_JSON ({"actor":"token",…}).
// Values are trimmed; blank actors or tokens, duplicate actors and
// duplicate token values are errors. getenv is os.Getenv outside tests.
func TokensFromEnv(getenv func(string) string) ([]Token, error) {
	if getenv(EnvBearerTokensAWS) != "" {
		return nil, fmt.Errorf("%w: %s is set, but this build has no AWS Secrets Manager support; use %s or %s", ErrInvalidConfig, EnvBearerTokensAWS, EnvBearerTokensFile, EnvBearerTokensJSON)
	}
	var out []Token
	if t := strings.TrimSpace(getenv(EnvBearerToken)); t != "" {
		out = append(out, Token{Actor: DefaultActor, Token: t})
	}
	var src, raw string
	if path := strings.TrimSpace(getenv(EnvBearerTokensFile)); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: read bearer tokens file: %v", ErrInvalidConfig, err)
		}
		src, raw = "bearer tokens file "+path, string(b)
	} else if j := getenv(EnvBearerTokensJSON); strings.TrimSpace(j) != "" {
		src, raw = EnvBearerTokensJSON, j
	}
	if raw != "" {
		entries, err := parseTokenObject(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %s must be a JSON object of actor to token: %v", ErrInvalidConfig, src, err)
		}
		out = append(out, entries...)
	}
	if err := validateTokens(out); err != nil {
		return nil, err
	}
	return out, nil
}

// parseTokenObject decodes {"actor":"token",…}, refusing duplicate keys
// (encoding/json would silently keep the last).
func parseTokenObject(raw string) ([]Token, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var out []Token
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		actor := k.(string)
		var token string
		if err := dec.Decode(&token); err != nil {
			return nil, fmt.Errorf("token of actor %q: %v", actor, err)
		}
		if seen[strings.TrimSpace(actor)] {
			return nil, fmt.Errorf("duplicate bearer token actor %q", strings.TrimSpace(actor))
		}
		seen[strings.TrimSpace(actor)] = true
		out = append(out, Token{Actor: actor, Token: token})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the object")
	}
	return out, nil
}

// validateTokens trims entries in place and refuses blanks and duplicates.
func validateTokens(ts []Token) error {
	actors, values := map[string]bool{}, map[string]bool{}
	for i := range ts {
		ts[i].Actor, ts[i].Token = strings.TrimSpace(ts[i].Actor), strings.TrimSpace(ts[i].Token)
		a, t := ts[i].Actor, ts[i].Token
		switch {
		case a == "":
			return fmt.Errorf("%w: bearer token actor names must not be blank", ErrInvalidConfig)
		case t == "":
			return fmt.Errorf("%w: bearer token for actor '%s' must not be blank", ErrInvalidConfig, a)
		case actors[a]:
			return fmt.Errorf("%w: duplicate bearer token actor '%s'", ErrInvalidConfig, a)
		case values[t]:
			return fmt.Errorf("%w: duplicate bearer token value configured", ErrInvalidConfig)
		}
		actors[a], values[t] = true, true
	}
	return nil
}

// tokenSet authenticates bearer tokens by SHA-256 digest. It never holds
// a plaintext token.
type tokenSet struct {
	entries []tokenEntry
}

type tokenEntry struct {
	digest [sha256.Size]byte
	actor  string
}

func newTokenSet(ts []Token) (*tokenSet, error) {
	cp := append([]Token(nil), ts...)
	if err := validateTokens(cp); err != nil {
		return nil, err
	}
	s := &tokenSet{}
	for _, t := range cp {
		s.entries = append(s.entries, tokenEntry{digest: sha256.Sum256([]byte(t.Token)), actor: t.Actor})
	}
	sort.Slice(s.entries, func(i, j int) bool { return s.entries[i].actor < s.entries[j].actor })
	return s, nil
}

// actor returns the actor bound to token. It compares the token's digest
// with every configured digest in constant time and never stops early, so
// timing reveals neither which token matched nor how much of it.
func (s *tokenSet) actor(token string) (string, bool) {
	d := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.entries {
		if subtle.ConstantTimeCompare(d[:], s.entries[i].digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return s.entries[found].actor, true
}

func (s *tokenSet) len() int { return len(s.entries) }

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header: exactly one header, the exact "Bearer " prefix, and the rest is
// the token as sent (no trimming, so near misses never match).
func bearerToken(h []string) (string, bool) {
	if len(h) != 1 {
		return "", false
	}
	t, ok := strings.CutPrefix(h[0], "Bearer ")
	if !ok || t == "" {
		return "", false
	}
	return t, true
}
