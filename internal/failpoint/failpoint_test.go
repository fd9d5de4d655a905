package failpoint

import (
	"errors"
	"testing"
)

func TestHit(t *testing.T) {
	if err := Hit("x/unarmed"); err != nil {
		t.Fatalf("unarmed point fired: %v", err)
	}
	off := Enable("x/step", Error)
	err := Hit("x/step")
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("armed error point: got %v", err)
	}
	if Hits("x/step") != 1 {
		t.Fatalf("hits = %d, want 1", Hits("x/step"))
	}
	off()
	if err := Hit("x/step"); err != nil {
		t.Fatalf("disarmed point fired: %v", err)
	}
}

func TestEnableSpec(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr bool
	}{
		{"a/b=error", false},
		{"a/b=error, c/d=sleep", false},
		{"", false},
		{"a/b", true},
		{"a/b=boom", true},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			err := EnableSpec(tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("EnableSpec(%q) err = %v, wantErr %v", tc.spec, err, tc.wantErr)
			}
			Disable("a/b")
			Disable("c/d")
		})
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic point did not panic")
			}
		}()
		defer Enable("p/q", Panic)()
		_ = Hit("p/q")
	}()
}
