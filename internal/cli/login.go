package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/opconfig"
	"github.com/spf13/cobra"
)

func (a *app) newLoginCmd() *cobra.Command {
	var token string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "login NAME [--token T]",
		Short: "Store a bearer token for a named server in ~/.omnigraph/credentials",
		Long: `Store the bearer token for server NAME (a servers: entry of the operator
config) in the credentials file (mode 0600). Without --token one line is read
from stdin, so the token stays out of shell history.`,
		Args: cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			if token == "" {
				line, err := bufio.NewReader(a.io.In).ReadString('\n')
				if err != nil && line == "" {
					return usagef("no token: pass --token T or write it on stdin")
				}
				token = line
			}
			token = strings.TrimSpace(token)
			if token == "" || strings.ContainsAny(token, "\r\n") {
				return usagef("the token is empty")
			}
			creds, err := opconfig.ReadCredentials(cfg.Home)
			if err != nil {
				return err
			}
			creds[args[0]] = token
			if err := opconfig.WriteCredentials(cfg.Home, creds); err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(struct {
					Server      string `json:"server"`
					Credentials string `json:"credentials"`
					Stored      bool   `json:"stored"`
				}{args[0], opconfig.CredentialsPath(cfg.Home), true})
			}
			if _, ok := cfg.Servers[args[0]]; !ok {
				fmt.Fprintf(a.io.Err, "warning: %q is not a servers: entry of the operator config; the token is used only for a server of that name\n", args[0])
			}
			fmt.Fprintf(a.io.Out, "stored the token for %s in %s\n", args[0], opconfig.CredentialsPath(cfg.Home))
			return nil
		}),
	}
	cmd.Flags().StringVar(&token, "token", "", "the bearer token (default: one line from stdin)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	acceptGlobals(cmd)
	return cmd
}

func (a *app) newLogoutCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logout NAME",
		Short: "Remove the stored token of a named server (idempotent)",
		Args:  cobra.ExactArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			creds, err := opconfig.ReadCredentials(cfg.Home)
			if err != nil {
				return err
			}
			_, had := creds[args[0]]
			if had {
				delete(creds, args[0])
				if err := opconfig.WriteCredentials(cfg.Home, creds); err != nil {
					return err
				}
			}
			if asJSON {
				return a.printJSON(struct {
					Server  string `json:"server"`
					Removed bool   `json:"removed"`
				}{args[0], had})
			}
			if had {
				fmt.Fprintf(a.io.Out, "removed the token for %s\n", args[0])
			} else {
				fmt.Fprintf(a.io.Out, "no token stored for %s\n", args[0])
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	acceptGlobals(cmd)
	return cmd
}

func (a *app) newProfileCmd() *cobra.Command {
	cmd := groupCmd("profile", "Show the profiles of the operator config", "")
	type profileJSON struct {
		Name         string  `json:"name"`
		Server       *string `json:"server,omitempty"`
		Cluster      *string `json:"cluster,omitempty"`
		Store        *string `json:"store,omitempty"`
		DefaultGraph *string `json:"default_graph,omitempty"`
	}
	toJSON := func(name string, p opconfig.Profile) profileJSON {
		return profileJSON{name, strPtr(p.Server), strPtr(p.Cluster), strPtr(p.Store), strPtr(p.DefaultGraph)}
	}
	describe := func(name string, p opconfig.Profile) string {
		s := name + ": " + firstNonEmpty(prefixed("server ", p.Server), prefixed("cluster ", p.Cluster), prefixed("store ", p.Store))
		if p.DefaultGraph != "" {
			s += ", graph " + p.DefaultGraph
		}
		return s
	}
	var listJSON, showJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the profiles",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			out := []profileJSON{}
			for _, n := range sortedMapKeys(cfg.Profiles) {
				out = append(out, toJSON(n, cfg.Profiles[n]))
				if !listJSON {
					fmt.Fprintln(a.io.Out, describe(n, cfg.Profiles[n]))
				}
			}
			if listJSON {
				return a.printJSON(struct {
					Profiles []profileJSON `json:"profiles"`
				}{out})
			}
			return nil
		}),
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the result as JSON")
	show := &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show one profile (default: --profile or $OMNIGRAPH_PROFILE)",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			cfg, err := a.operator()
			if err != nil {
				return err
			}
			name := a.profileName()
			if len(args) > 0 {
				name = args[0]
			}
			if name == "" {
				return usagef("name a profile, or set --profile / OMNIGRAPH_PROFILE")
			}
			p, ok := cfg.Profiles[name]
			if !ok {
				return fmt.Errorf("unknown profile %q", name)
			}
			if showJSON {
				return a.printJSON(toJSON(name, p))
			}
			fmt.Fprintln(a.io.Out, describe(name, p))
			return nil
		}),
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the result as JSON")
	acceptGlobals(list)
	acceptGlobals(show, "profile")
	cmd.AddCommand(list, show)
	return cmd
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
