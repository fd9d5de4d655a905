package limits

import (
	"errors"
	"testing"
)

func TestBudget(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		charges []int64
		failAt  int // index of the first failing charge, -1 for none
		used    int64
	}{
		{"unlimited", 0, []int64{1 << 40, 1 << 40}, -1, 0},
		{"within", 100, []int64{40, 60}, -1, 100},
		{"over", 100, []int64{40, 61, 10}, 1, 50},
		{"one huge", 100, []int64{1 << 62}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget("query_memory_bytes", tc.limit, "")
			failed := -1
			for i, n := range tc.charges {
				err := b.Charge(n)
				if err != nil && failed < 0 {
					failed = i
					var le *Error
					if !errors.As(err, &le) || !errors.Is(err, ErrResourceLimit) || le.Limit != tc.limit || le.Actual <= tc.limit {
						t.Fatalf("charge %d: err = %#v", i, err)
					}
				}
			}
			if failed != tc.failAt {
				t.Fatalf("first failure at %d, want %d", failed, tc.failAt)
			}
			if b.Used() != tc.used {
				t.Fatalf("used = %d, want %d", b.Used(), tc.used)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"1048576", 1 << 20, false},
		{"512MiB", 512 << 20, false},
		{"2GB", 2e9, false},
		{"1.5 GiB", 3 << 29, false},
		{"10kb", 10000, false},
		{"none", -1, false},
		{"Unlimited", -1, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"12 parsecs", 0, true},
		{"-5", 0, true},
		{"1e30", 0, true},
		{"99999999999TiB", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
