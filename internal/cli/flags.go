package cli

import "github.com/spf13/cobra"

// nonEmptyFlags name things (a commit, a branch): given explicitly, an empty
// value is a usage error rather than the default. `--snapshot ”` must not
// silently read the branch head, nor `--branch ”` main.
var nonEmptyFlags = []string{"snapshot", "branch", "from", "commit"}

func checkNonEmptyFlags(cmd *cobra.Command) error {
	for _, n := range nonEmptyFlags {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed && f.Value.String() == "" {
			return usagef("--%s needs a value (an empty one would silently mean the default)", n)
		}
	}
	return nil
}
