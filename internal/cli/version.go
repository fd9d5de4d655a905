package cli

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph"
	"github.com/spf13/cobra"
)

// Version is the CLI's release, shared with the library.
var Version = omnigraph.Version

func (a *app) newVersionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the omnigraph version and the storage format version",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(a.io.Out, "omnigraph %s\n", Version)
			fmt.Fprintf(a.io.Out, "internal-schema %d\n", omnigraph.FormatVersion)
			return nil
		}),
	}
	return cmd
}
