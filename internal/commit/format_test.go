package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestOpenRefusesOtherFormats(t *testing.T) {
	ctx := context.Background()
	for _, version := range []int{FormatCurrent - 1, FormatCurrent + 1, FormatCurrent + 97} {
		for _, readOnly := range []bool{true, false} {
			t.Run(fmt.Sprintf("v%d/readonly=%v", version, readOnly), func(t *testing.T) {
				mem := storage.NewMem()
				initGraph(t, mem)
				orig, _, err := mem.Get(ctx, StampKey)
				if err != nil {
					t.Fatal(err)
				}
				stamp := fmt.Sprintf(`{"format":"omnigraph","version":%d,"created_at":1}`, version)
				if _, err := mem.Put(ctx, StampKey, []byte(stamp)); err != nil {
					t.Fatal(err)
				}
				// Restore before the cleanup check (cleanups run last-in first-out).
				t.Cleanup(func() { mem.Put(ctx, StampKey, orig) })
				cs := storage.NewCounting(mem)
				_, err = Open(ctx, cs, Options{ReadOnly: readOnly})
				var fe *FormatError
				if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) {
					t.Fatalf("Open err = %v, want *FormatError", err)
				}
				if fe.Found != version || fe.Supported != FormatCurrent {
					t.Fatalf("FormatError %+v", fe)
				}
				msg := err.Error()
				if !strings.Contains(msg, fmt.Sprint(version)) || !strings.Contains(msg, fmt.Sprint(FormatCurrent)) {
					t.Fatalf("message %q does not name both versions", msg)
				}
				if w := writes(cs.Snapshot()); w != 0 {
					t.Fatalf("open issued %d write requests", w)
				}
				// Init on such a location is refused the same way, also writing nothing.
				_, _, err = Init(ctx, cs, InitRequest{Schema: []byte(testSchema)}, Options{})
				if !errors.As(err, &fe) {
					t.Fatalf("Init err = %v, want *FormatError", err)
				}
				if w := writes(cs.Snapshot()); w != 0 {
					t.Fatalf("refused init issued %d write requests", w)
				}
			})
		}
	}
}

func TestOpenStampProblems(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		stamp string // "" = no stamp
		want  error
	}{
		{"missing", "", ErrNotInitialized},
		{"garbage", "{{", ErrCorrupt},
		{"other-format", `{"format":"lance","version":1,"created_at":1}`, ErrCorrupt},
		{"unknown-field", `{"format":"omnigraph","version":1,"created_at":1,"x":2}`, ErrCorrupt},
		{"negative", `{"format":"omnigraph","version":-1,"created_at":1}`, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := storage.NewMem()
			if tt.stamp != "" {
				if _, err := mem.Put(ctx, StampKey, []byte(tt.stamp)); err != nil {
					t.Fatal(err)
				}
			}
			cs := storage.NewCounting(mem)
			_, err := Open(ctx, cs, Options{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if w := writes(cs.Snapshot()); w != 0 {
				t.Fatalf("open issued %d writes", w)
			}
		})
	}
}

func TestStampRoundTrip(t *testing.T) {
	s, err := decodeStamp(encodeStamp(fixedClock()()))
	if err != nil || s.Version != FormatCurrent || s.Format != "omnigraph" || s.CreatedAt <= 0 {
		t.Fatalf("stamp %+v err %v", s, err)
	}
}
