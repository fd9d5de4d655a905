package opconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// HomeEnv overrides the operator directory (default ~/.omnigraph).
const HomeEnv = "OMNIGRAPH_HOME"

// Config is config.yaml.
type Config struct {
	Operator Operator           `yaml:"operator"`
	Servers  map[string]Server  `yaml:"servers"`
	Defaults Defaults           `yaml:"defaults"`
	Clusters map[string]Cluster `yaml:"clusters"`
	Profiles map[string]Profile `yaml:"profiles"`
	Aliases  map[string]Alias   `yaml:"aliases"`

	// Home is the directory the config was read from.
	Home string `yaml:"-"`
}

// Operator is who the operator is.
type Operator struct {
	Actor string `yaml:"actor"`
}

// Server is a named server.
type Server struct {
	URL string `yaml:"url"`
}

// Defaults apply when a command names no scope or format.
type Defaults struct {
	Output              string `yaml:"output"`
	TableMaxColumnWidth int    `yaml:"table_max_column_width"`
	TableCellLayout     string `yaml:"table_cell_layout"`
	Server              string `yaml:"server"`
	Store               string `yaml:"store"`
	DefaultGraph        string `yaml:"default_graph"`
}

// Cluster is a named cluster storage root.
type Cluster struct {
	Root string `yaml:"root"`
}

// Profile binds exactly one of server, cluster or store (+ default graph).
type Profile struct {
	Server       string `yaml:"server"`
	Cluster      string `yaml:"cluster"`
	Store        string `yaml:"store"`
	DefaultGraph string `yaml:"default_graph"`
}

// Alias is a stored read query on a named server, invoked by name.
type Alias struct {
	Server  string         `yaml:"server"`
	Graph   string         `yaml:"graph"`
	Query   string         `yaml:"query"`
	Args    []string       `yaml:"args"`
	Params  map[string]any `yaml:"params"`
	Format  string         `yaml:"format"`
	Command string         `yaml:"command"` // legacy: read|change|query|mutate
}

// Home returns the operator directory: $OMNIGRAPH_HOME or ~/.omnigraph.
func Home(getenv func(string) string) (string, error) {
	if h := getenv(HomeEnv); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("operator config: no home directory (set %s): %w", HomeEnv, err)
	}
	return filepath.Join(u, ".omnigraph"), nil
}

// Load reads home/config.yaml. It returns warnings for unknown keys.
func Load(home string) (*Config, []string, error) {
	c := &Config{Home: home}
	path := filepath.Join(home, "config.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("operator config %s: %w", path, err)
	}
	var warnings []string
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) || !allUnknownField(te) {
			return nil, nil, fmt.Errorf("operator config %s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		for _, e := range te.Errors {
			warnings = append(warnings, fmt.Sprintf("operator config %s: ignoring unknown key (%s)", path, e))
		}
		*c = Config{Home: home}
		if err := yaml.Unmarshal(data, c); err != nil {
			return nil, nil, fmt.Errorf("operator config %s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
		}
	}
	c.Home = home
	if c.Defaults.Server != "" && c.Defaults.Store != "" {
		return nil, nil, fmt.Errorf("operator config %s: defaults.server and defaults.store are mutually exclusive", path)
	}
	for name, p := range c.Profiles {
		n := 0
		for _, s := range []string{p.Server, p.Cluster, p.Store} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return nil, nil, fmt.Errorf("operator config %s: profile %q must bind exactly one of server, cluster, store", path, name)
		}
	}
	return c, warnings, nil
}

func allUnknownField(te *yaml.TypeError) bool {
	for _, e := range te.Errors {
		if !strings.Contains(e, "not found in type") {
			return false
		}
	}
	return true
}

// ServerURL resolves a --server value: a literal http(s) URL, or a name
// under servers:.
func (c *Config) ServerURL(nameOrURL string) (url, name string, err error) {
	if strings.HasPrefix(nameOrURL, "http://") || strings.HasPrefix(nameOrURL, "https://") {
		return strings.TrimSuffix(nameOrURL, "/"), c.serverNameFor(nameOrURL), nil
	}
	s, ok := c.Servers[nameOrURL]
	if !ok || s.URL == "" {
		return "", "", fmt.Errorf("unknown server %q: give an http(s):// URL or a name under servers: in %s", nameOrURL, filepath.Join(c.Home, "config.yaml"))
	}
	return strings.TrimSuffix(s.URL, "/"), nameOrURL, nil
}

// serverNameFor returns the servers: entry whose URL prefixes url (the
// longest one), or "".
func (c *Config) serverNameFor(url string) string {
	best, bestLen := "", -1
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		u := strings.TrimSuffix(c.Servers[n].URL, "/")
		if u != "" && (url == u || strings.HasPrefix(url, u+"/")) && len(u) > bestLen {
			best, bestLen = n, len(u)
		}
	}
	return best
}

// TokenEnvName is the per-server token variable: OMNIGRAPH_TOKEN_<NAME>.
func TokenEnvName(server string) string {
	return "OMNIGRAPH_TOKEN_" + strings.ToUpper(strings.ReplaceAll(server, "-", "_"))
}

// Token finds the bearer token for a request to url ("" = none).
func (c *Config) Token(url string, getenv func(string) string) (string, error) {
	if name := c.serverNameFor(url); name != "" {
		if t := strings.TrimSpace(getenv(TokenEnvName(name))); t != "" {
			return t, nil
		}
		creds, err := ReadCredentials(c.Home)
		if err != nil {
			return "", err
		}
		if t := creds[name]; t != "" {
			return t, nil
		}
	}
	return strings.TrimSpace(getenv("OMNIGRAPH_BEARER_TOKEN")), nil
}
