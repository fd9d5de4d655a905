// Command omnigraph is the Omnigraph command line. Run `omnigraph --help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/omnigraph-go/omnigraph/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.SystemIO())
	stop()
	os.Exit(code)
}
