package cli

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (most tests run the
// engine and the HTTP server in-process) and removes the omnigraph binary
// the subprocess tests built.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binErr == nil && binPath != "" {
			os.RemoveAll(filepath.Dir(binPath))
		}
		os.Exit(code)
	}))
}
