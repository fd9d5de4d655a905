package omnigraph_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// TestEnvOptions: each environment knob Open reads takes the values it
// documents; anything else is a typed error (ErrInvalidOption) and opens
// nothing, unless an explicit option stands in for the variable
// (Options.CacheBytes wins over OMNIGRAPH_CACHE_BYTES).
func TestEnvOptions(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	if _, err := omnigraph.Init(ctx, dir, "schema.pg", exampleSchema, "", omnigraph.Options{}); err != nil {
		t.Fatal(err)
	}
	onOff := []string{"0", "off", "1", "on", ""}
	notOnOff := []string{"yes", "2", "false"}
	inline := []string{"0", "256", ""}
	notInline := []string{"-1", "x", "1.5"}
	for _, c := range []struct {
		env       string
		good, bad []string
		explicit  *omnigraph.Options // opens despite a bad value
	}{
		{omnigraph.EnvCacheBytes, []string{"1048576", ""}, []string{"abc", "0", "-5", "1e9"}, &omnigraph.Options{CacheBytes: 1 << 20}},
		{omnigraph.EnvWriteTurns, onOff, notOnOff, nil},
		{omnigraph.EnvChainObjects, onOff, notOnOff, nil},
		{omnigraph.EnvInlineDVBytes, inline, notInline, nil},
		{omnigraph.EnvInlineStateBytes, inline, notInline, nil},
	} {
		for _, v := range c.good {
			t.Setenv(c.env, v)
			if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); err != nil {
				t.Fatalf("%s=%q: %v", c.env, v, err)
			}
		}
		for _, bad := range c.bad {
			t.Setenv(c.env, bad)
			if _, err := omnigraph.Open(ctx, dir, omnigraph.Options{}); !errors.Is(err, omnigraph.ErrInvalidOption) {
				t.Fatalf("%s=%q: got %v, want ErrInvalidOption", c.env, bad, err)
			}
			if c.explicit != nil {
				if _, err := omnigraph.Open(ctx, dir, *c.explicit); err != nil {
					t.Fatalf("explicit %+v with %s=%q: %v", *c.explicit, c.env, bad, err)
				}
			}
		}
		t.Setenv(c.env, "")
	}
}
