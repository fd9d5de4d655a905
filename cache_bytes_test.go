package omnigraph_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// TestCacheBytesEnv: OMNIGRAPH_CACHE_BYTES sets the memory cache budget of
// handles opened without Options.CacheBytes; a bad value is a typed error
// and opens nothing.
func TestCacheBytesEnv(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	if _, err := omnigraph.Init(ctx, dir, "schema.pg", exampleSchema, "", omnigraph.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"abc", "0", "-5", "1e9"} {
		t.Setenv(omnigraph.EnvCacheBytes, bad)
		if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); !errors.Is(err, omnigraph.ErrInvalidOption) {
			t.Fatalf("%s=%q: got %v, want ErrInvalidOption", omnigraph.EnvCacheBytes, bad, err)
		}
		// An explicit budget wins over the environment.
		if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{CacheBytes: 1 << 20}); err != nil {
			t.Fatalf("explicit budget with %s=%q: %v", omnigraph.EnvCacheBytes, bad, err)
		}
	}
	t.Setenv(omnigraph.EnvCacheBytes, "1048576")
	if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestWriteTurnsEnv: OMNIGRAPH_WRITE_TURNS and OMNIGRAPH_CHAIN_OBJECTS take
// 0/off or 1/on; anything else is a typed error and opens nothing.
func TestWriteTurnsEnv(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	if _, err := omnigraph.Init(ctx, dir, "schema.pg", exampleSchema, "", omnigraph.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{omnigraph.EnvWriteTurns, omnigraph.EnvChainObjects} {
		for _, v := range []string{"0", "off", "1", "on", ""} {
			t.Setenv(env, v)
			if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); err != nil {
				t.Fatalf("%s=%q: %v", env, v, err)
			}
		}
		for _, bad := range []string{"yes", "2", "false"} {
			t.Setenv(env, bad)
			if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); !errors.Is(err, omnigraph.ErrInvalidOption) {
				t.Fatalf("%s=%q: got %v, want ErrInvalidOption", env, bad, err)
			}
		}
		t.Setenv(env, "")
	}
}
