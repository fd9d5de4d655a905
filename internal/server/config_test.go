package server

import "testing"

// TestLimitsDefaults: every limit left zero or negative takes its default;
// a set one is kept.
func TestLimitsDefaults(t *testing.T) {
	defaults := Limits{PerActorInflight: DefaultPerActorInflight, PerActorBytes: DefaultPerActorBytes,
		BodyBytes: DefaultBodyBytes, LoadBodyBytes: DefaultLoadBodyBytes}
	set := Limits{PerActorInflight: 1, PerActorBytes: 2, BodyBytes: 3, LoadBodyBytes: 4}
	for _, c := range []struct {
		name string
		in   Limits
		want Limits
	}{
		{"zero", Limits{}, defaults},
		{"negative", Limits{PerActorInflight: -1, PerActorBytes: -1, BodyBytes: -1, LoadBodyBytes: -1}, defaults},
		{"set", set, set},
		{"mixed", Limits{BodyBytes: 7}, Limits{PerActorInflight: DefaultPerActorInflight, PerActorBytes: DefaultPerActorBytes,
			BodyBytes: 7, LoadBodyBytes: DefaultLoadBodyBytes}},
	} {
		if got := c.in.withDefaults(); got != c.want {
			t.Errorf("%s: %+v.withDefaults() = %+v, want %+v", c.name, c.in, got, c.want)
		}
	}
}
