package cli

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (most tests run the
// engine and the HTTP server in-process) and removes the omnigraph binary
// the subprocess tests built.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		cliBinary.Remove()
		os.Exit(code)
	}))
}
