package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigFile is the name of the desired-state file inside a config directory.
const ConfigFile = "cluster.yaml"

// Config is cluster.yaml (spec/surfaces.md §4), decoded strictly.
type Config struct {
	Version   int                       `yaml:"version"`
	Metadata  *Metadata                 `yaml:"metadata"`
	Storage   string                    `yaml:"storage"`
	State     *StateConfig              `yaml:"state"`
	Providers *Providers                `yaml:"providers"`
	Graphs    map[string]*GraphConfig   `yaml:"graphs"`
	Policies  map[string]*PolicyBinding `yaml:"policies"`
}

// Metadata is display-only.
type Metadata struct {
	Name string `yaml:"name"`
}

// StateConfig selects the state backend and whether commands take the lock.
type StateConfig struct {
	Backend string `yaml:"backend"`
	Lock    *bool  `yaml:"lock"`
}

// Providers holds provider profiles; only embedding providers exist.
type Providers struct {
	Embedding map[string]*EmbeddingProvider `yaml:"embedding"`
}

// EmbeddingProvider is a query-time embedding profile. APIKey must be an
// environment reference (${NAME}); it is resolved only by a booting server.
type EmbeddingProvider struct {
	Kind    string `yaml:"kind" json:"kind"`
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	Model   string `yaml:"model" json:"model,omitempty"`
	APIKey  string `yaml:"api_key" json:"api_key,omitempty"`
}

// GraphConfig declares one graph.
type GraphConfig struct {
	Schema            string         `yaml:"schema"`
	EmbeddingProvider string         `yaml:"embedding_provider"`
	Queries           yaml.Node      `yaml:"queries"`
	ExternalBlobs     *ExternalBlobs `yaml:"external_blobs"`
}

// ExternalBlobs lists the external blob bases a graph may reference.
type ExternalBlobs struct {
	Allow []ExternalBlobBase `yaml:"allow"`
}

// ExternalBlobBase is one allowed base URI and where it may be read.
type ExternalBlobBase struct {
	Base  string `yaml:"base"`
	Scope string `yaml:"scope"`
}

// PolicyBinding binds a policy file to graphs or to the cluster.
type PolicyBinding struct {
	File      string   `yaml:"file"`
	AppliesTo []string `yaml:"applies_to"`
}

// reservedKeys are top-level keys of later phases: they fail with a typed
// diagnostic rather than being ignored.
var reservedKeys = map[string]bool{"pipelines": true, "embeddings": true, "ui": true, "aliases": true, "bindings": true}

var graphIDPattern = regexp.MustCompile(`^[a-zA-Z0-9-]{1,64}$`)

// reservedGraphIDs collide with flat server routes.
var reservedGraphIDs = map[string]bool{"policies": true, "healthz": true, "openapi": true, "graphs": true}

// ValidGraphID reports whether id may name a served graph.
func ValidGraphID(id string) bool { return graphIDPattern.MatchString(id) && !reservedGraphIDs[id] }

// parseConfig decodes cluster.yaml strictly. Reserved keys and YAML errors
// come back as diagnostics; a nil Config means nothing else can be checked.
func parseConfig(data []byte) (*Config, []Diagnostic) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []Diagnostic{errorf(CodeConfigParse, "", "%s: %s", ConfigFile, trimYAML(err))}
	}
	var diags []Diagnostic
	if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		m := doc.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i].Value; reservedKeys[k] {
				diags = append(diags, errorf(CodeUnsupportedConfig, "", "%s line %d: key %q is reserved for a later phase and not supported", ConfigFile, m.Content[i].Line, k))
			}
		}
	}
	if len(diags) > 0 {
		return nil, diags
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []Diagnostic{errorf(CodeConfigParse, "", "%s is empty", ConfigFile)}
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				code := CodeConfigParse
				if strings.Contains(e, "not found in type") {
					code = CodeUnsupportedConfig
				}
				diags = append(diags, errorf(code, "", "%s: %s", ConfigFile, trimYAML(errors.New(e))))
			}
			return nil, diags
		}
		return nil, []Diagnostic{errorf(CodeConfigParse, "", "%s: %s", ConfigFile, trimYAML(err))}
	}
	if c.Version != 1 {
		diags = append(diags, errorf(CodeConfigParse, "", "%s: version must be 1 (got %d)", ConfigFile, c.Version))
	}
	if c.State != nil && c.State.Backend != "" && c.State.Backend != "cluster" {
		diags = append(diags, errorf(CodeUnsupportedConfig, "", "state.backend %q is not supported (only cluster)", c.State.Backend))
	}
	return &c, diags
}

func trimYAML(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// lockEnabled reports state.lock (default true).
func (c *Config) lockEnabled() bool {
	return c.State == nil || c.State.Lock == nil || *c.State.Lock
}

// queryForm is one declared query source: a file and, for the name→file
// form, the single query name it registers ("" = every query in the file).
type queryForm struct {
	file string
	name string
	line int
}

// queryForms interprets the three shapes of graphs.<id>.queries: a
// directory (string ending in "/" or naming a directory), a list of files,
// or a map name → {file}. isDir reports whether a config-relative path is
// a directory; listDir lists the *.gq files of one.
func queryForms(n *yaml.Node, isDir func(string) bool, listDir func(string) ([]string, error)) ([]queryForm, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		p := n.Value
		if !strings.HasSuffix(p, "/") && !isDir(p) {
			return []queryForm{{file: p, line: n.Line}}, nil
		}
		files, err := listDir(strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, fmt.Errorf("queries directory %q: %w", p, err)
		}
		out := make([]queryForm, len(files))
		for i, f := range files {
			out[i] = queryForm{file: f, line: n.Line}
		}
		return out, nil
	case yaml.SequenceNode:
		var out []queryForm
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: queries list items must be file paths", it.Line)
			}
			out = append(out, queryForm{file: it.Value, line: it.Line})
		}
		return out, nil
	case yaml.MappingNode:
		var out []queryForm
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if seen[k.Value] {
				return nil, fmt.Errorf("line %d: query %q declared twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			var entry struct {
				File string `yaml:"file"`
			}
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			if err := enc.Encode(v); err != nil {
				return nil, err
			}
			dec := yaml.NewDecoder(&buf)
			dec.KnownFields(true)
			if err := dec.Decode(&entry); err != nil {
				return nil, fmt.Errorf("line %d: query %q: %s", k.Line, k.Value, trimYAML(err))
			}
			if entry.File == "" {
				return nil, fmt.Errorf("line %d: query %q needs file:", k.Line, k.Value)
			}
			out = append(out, queryForm{file: entry.File, name: k.Value, line: k.Line})
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: queries must be a directory, a list of files or a map of name to {file}", n.Line)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
