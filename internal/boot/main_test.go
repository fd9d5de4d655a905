package boot

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		cliBinary.Remove()
		serverBinary.Remove()
		os.Exit(code)
	}))
}
