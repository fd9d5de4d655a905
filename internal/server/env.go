package server

import (
	"fmt"
	"strconv"
	"strings"
)

// Environment variables of the server's boot (spec/surfaces.md §2.1).
const (
	EnvUnauthenticated  = "OMNIGRAPH_UNAUTHENTICATED"
	EnvRequireAllGraphs = "OMNIGRAPH_REQUIRE_ALL_GRAPHS"
	EnvPerActorInflight = "OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX"
	EnvPerActorBytes    = "OMNIGRAPH_PER_ACTOR_BYTES_MAX"
)

// EnvFlag reads a boolean environment variable: 1/true/yes are true,
// 0/false/no/empty false, anything else an error.
func EnvFlag(getenv func(string) string, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(getenv(name))) {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s must be 1, true or yes (true) or 0, false, no or empty (false)", ErrInvalidConfig, name)
}

// LimitsFromEnv reads OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX and
// OMNIGRAPH_PER_ACTOR_BYTES_MAX; unset values keep the defaults.
func LimitsFromEnv(getenv func(string) string) (Limits, error) {
	var l Limits
	if v := strings.TrimSpace(getenv(EnvPerActorInflight)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return l, fmt.Errorf("%w: %s must be a positive integer, got %q", ErrInvalidConfig, EnvPerActorInflight, v)
		}
		l.PerActorInflight = n
	}
	if v := strings.TrimSpace(getenv(EnvPerActorBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return l, fmt.Errorf("%w: %s must be a positive integer, got %q", ErrInvalidConfig, EnvPerActorBytes, v)
		}
		l.PerActorBytes = n
	}
	return l.withDefaults(), nil
}
