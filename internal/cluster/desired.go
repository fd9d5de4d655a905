package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/policy"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Desired is a validated cluster.yaml with every referenced file read: the
// desired state plan compares with the ledger.
type Desired struct {
	Dir       string
	Config    *Config
	Root      string // storage root: a directory or a scheme URI
	Graphs    map[string]*DesiredGraph
	Policies  map[string]*DesiredPolicy
	Providers map[string]*EmbeddingProvider
	// Resources maps every resource address to its desired ledger entry.
	Resources map[string]ResourceState
}

// DesiredGraph is one declared graph.
type DesiredGraph struct {
	ID                string
	URI               string
	SchemaFile        string
	SchemaSource      string
	EmbeddingProvider string // normalized address, "" for none
	Queries           map[string]*DesiredQuery
}

// DesiredQuery is one stored query: the named declaration of a .gq file.
type DesiredQuery struct {
	Graph    string
	Name     string
	File     string // config-relative path
	Source   string // the whole containing file
	Digest   string
	Mutation bool
}

// DesiredPolicy is one policy bundle and its bindings.
type DesiredPolicy struct {
	Name      string
	File      string
	Source    string
	Digest    string
	Parsed    *policy.File
	AppliesTo []string // normalized: "cluster" or "graph.<id>", sorted
}

// Resource addresses.
func graphAddr(id string) string          { return "graph." + id }
func schemaAddr(id string) string         { return "schema." + id }
func queryAddr(graph, name string) string { return "query." + graph + "." + name }
func policyAddr(name string) string       { return "policy." + name }
func providerAddr(name string) string     { return "provider.embedding." + name }

var envRef = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// LoadDesired reads and validates the config directory. It returns the
// desired state when there are no errors, and every diagnostic found.
func LoadDesired(dir string) (*Desired, []Diagnostic) {
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, []Diagnostic{errorf(CodeConfigMissing, "", "no %s in %s (--config names the directory that holds it)", ConfigFile, dir)}
		}
		return nil, []Diagnostic{errorf(CodeConfigMissing, "", "read %s: %v", filepath.Join(dir, ConfigFile), err)}
	}
	cfg, diags := parseConfig(data)
	if cfg == nil {
		return nil, diags
	}
	d := &Desired{
		Dir: dir, Config: cfg, Root: storageRoot(dir, cfg),
		Graphs: map[string]*DesiredGraph{}, Policies: map[string]*DesiredPolicy{},
		Providers: map[string]*EmbeddingProvider{}, Resources: map[string]ResourceState{},
	}
	readRel := func(addr, rel string) (string, bool) {
		if rel == "" {
			diags = append(diags, errorf(CodeFileMissing, addr, "no file given"))
			return "", false
		}
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			diags = append(diags, errorf(CodeFileMissing, addr, "read %s: %v", rel, err))
			return "", false
		}
		return string(b), true
	}

	// Providers.
	if cfg.Providers != nil {
		for _, name := range sortedKeys(cfg.Providers.Embedding) {
			p := cfg.Providers.Embedding[name]
			addr := providerAddr(name)
			if p == nil {
				diags = append(diags, errorf(CodeProvider, addr, "empty provider profile"))
				continue
			}
			switch p.Kind {
			case "openai-compatible", "openai", "gemini":
				if p.Model == "" {
					diags = append(diags, errorf(CodeProvider, addr, "kind %s needs a model", p.Kind))
				}
				if !envRef.MatchString(p.APIKey) {
					diags = append(diags, errorf(CodeProvider, addr, "api_key must be an environment reference like ${OPENAI_API_KEY}; inline secrets are refused"))
				}
			case "mock":
				if p.APIKey != "" && !envRef.MatchString(p.APIKey) {
					diags = append(diags, errorf(CodeProvider, addr, "api_key must be an environment reference"))
				}
			default:
				diags = append(diags, errorf(CodeProvider, addr, "unknown kind %q (openai-compatible, openai, gemini, mock)", p.Kind))
			}
			d.Providers[name] = p
			d.Resources[addr] = ResourceState{Digest: digestJSON(p), EmbeddingProfile: p}
		}
	}

	// Graphs, schemas, queries.
	for _, id := range sortedKeys(cfg.Graphs) {
		g := cfg.Graphs[id]
		addr := graphAddr(id)
		if !ValidGraphID(id) {
			diags = append(diags, errorf(CodeInvalidGraphID, addr, "graph id %q must match ^[a-zA-Z0-9-]{1,64}$ and not be one of policies, healthz, openapi, graphs", id))
			continue
		}
		if g == nil {
			diags = append(diags, errorf(CodeConfigParse, addr, "graph %s needs a schema", id))
			continue
		}
		dg := &DesiredGraph{ID: id, URI: GraphURI(d.Root, id), SchemaFile: g.Schema, Queries: map[string]*DesiredQuery{}}
		if g.EmbeddingProvider != "" {
			name := strings.TrimPrefix(g.EmbeddingProvider, "provider.embedding.")
			if _, ok := d.Providers[name]; !ok {
				diags = append(diags, errorf(CodeProvider, addr, "embedding_provider %q is not declared under providers.embedding", g.EmbeddingProvider))
			}
			dg.EmbeddingProvider = providerAddr(name)
		}
		if g.ExternalBlobs != nil {
			for i, b := range g.ExternalBlobs.Allow {
				if !strings.Contains(b.Base, "://") || !strings.HasSuffix(b.Base, "/") {
					diags = append(diags, errorf(CodeExternalBlob, addr, "external_blobs.allow[%d].base %q must be a URI ending in /", i, b.Base))
				}
				if b.Scope != "server_safe" && b.Scope != "embedded_only" {
					diags = append(diags, errorf(CodeExternalBlob, addr, "external_blobs.allow[%d].scope %q must be server_safe or embedded_only", i, b.Scope))
				}
			}
		}
		d.Graphs[id] = dg
		d.Resources[addr] = ResourceState{Digest: digestJSON([]string{id, dg.EmbeddingProvider}), EmbeddingProvider: dg.EmbeddingProvider, Root: graphsPrefix + id + ".omni"}

		src, ok := readRel(schemaAddr(id), g.Schema)
		if !ok {
			continue
		}
		dg.SchemaSource = src
		cat, err := schema.Compile(g.Schema, src)
		if err != nil {
			diags = append(diags, errorf(CodeSchemaParse, schemaAddr(id), "%s: %v", g.Schema, err))
			continue
		}
		d.Resources[schemaAddr(id)] = ResourceState{Digest: digest([]byte(src))}

		forms, err := queryForms(&g.Queries,
			func(p string) bool { st, err := os.Stat(filepath.Join(dir, p)); return err == nil && st.IsDir() },
			func(p string) ([]string, error) {
				ents, err := os.ReadDir(filepath.Join(dir, p))
				if err != nil {
					return nil, err
				}
				var out []string
				for _, e := range ents {
					if !e.IsDir() && strings.HasSuffix(e.Name(), ".gq") {
						out = append(out, filepath.ToSlash(filepath.Join(p, e.Name())))
					}
				}
				sort.Strings(out)
				return out, nil
			})
		if err != nil {
			diags = append(diags, errorf(CodeConfigParse, addr, "queries: %v", err))
			continue
		}
		declaredIn := map[string]string{}
		for _, f := range forms {
			qsrc, ok := readRel(addr, f.file)
			if !ok {
				continue
			}
			ast, err := query.Parse(f.file, qsrc)
			if err != nil {
				diags = append(diags, errorf(CodeQueryParse, addr, "%s: %v", f.file, err))
				continue
			}
			found := false
			for _, q := range ast.Queries {
				if f.name != "" && q.Name != f.name {
					continue
				}
				found = true
				qa := queryAddr(id, q.Name)
				if prev, dup := declaredIn[q.Name]; dup {
					diags = append(diags, errorf(CodeDuplicateQueryName, qa, "query %q is declared in both %s and %s", q.Name, prev, f.file))
					continue
				}
				declaredIn[q.Name] = f.file
				plan, err := query.CheckQuery(cat, f.file, qsrc, q)
				if err != nil {
					diags = append(diags, errorf(CodeQueryType, qa, "%s: %v", f.file, err))
					continue
				}
				dq := &DesiredQuery{Graph: id, Name: q.Name, File: f.file, Source: qsrc, Digest: digest([]byte(qsrc)), Mutation: plan.IsMutation()}
				dg.Queries[q.Name] = dq
				d.Resources[qa] = ResourceState{Digest: dq.Digest}
			}
			if f.name != "" && !found {
				diags = append(diags, errorf(CodeQueryParse, queryAddr(id, f.name), "%s declares no query named %q", f.file, f.name))
			}
		}
	}

	// Policies and their bindings: one bundle per scope.
	boundBy := map[string]string{}
	for _, name := range sortedKeys(cfg.Policies) {
		b := cfg.Policies[name]
		addr := policyAddr(name)
		if b == nil {
			diags = append(diags, errorf(CodePolicyParse, addr, "policy %s needs file and applies_to", name))
			continue
		}
		src, ok := readRel(addr, b.File)
		if !ok {
			continue
		}
		pf, err := policy.Parse(b.File, []byte(src))
		if err != nil {
			diags = append(diags, errorf(CodePolicyParse, addr, "%v", err))
			continue
		}
		dp := &DesiredPolicy{Name: name, File: b.File, Source: src, Digest: digest([]byte(src)), Parsed: pf}
		if len(b.AppliesTo) == 0 {
			diags = append(diags, errorf(CodePolicyBinding, addr, "applies_to must name graphs or cluster"))
		}
		for _, t := range b.AppliesTo {
			var scope string
			switch {
			case t == "cluster":
				scope = "cluster"
				if _, err := policy.CompileServer(name, pf); err != nil {
					diags = append(diags, errorf(CodePolicyBinding, addr, "bound to cluster: %v", err))
				}
			default:
				gid := strings.TrimPrefix(t, "graph.")
				if _, ok := cfg.Graphs[gid]; !ok {
					diags = append(diags, errorf(CodePolicyBinding, addr, "applies_to names %q, which is not a declared graph", t))
					continue
				}
				scope = graphAddr(gid)
				if _, err := policy.CompileGraph(name, pf, gid); err != nil {
					diags = append(diags, errorf(CodePolicyBinding, addr, "bound to %s: %v", scope, err))
				}
			}
			if prev, dup := boundBy[scope]; dup {
				diags = append(diags, errorf(CodePolicyBinding, addr, "%s is already bound to policy %s (one bundle per scope)", scope, prev))
				continue
			}
			boundBy[scope] = name
			dp.AppliesTo = append(dp.AppliesTo, scope)
		}
		sort.Strings(dp.AppliesTo)
		d.Policies[name] = dp
		d.Resources[addr] = ResourceState{Digest: dp.Digest, AppliesTo: dp.AppliesTo}
	}
	if hasErrors(diags) {
		return nil, diags
	}
	return d, diags
}

// ConfigDigest is the digest of the whole desired resource set.
func (d *Desired) ConfigDigest() string { return digestJSON(d.Resources) }

func (d *Desired) String() string { return fmt.Sprintf("cluster %s (%d graphs)", d.Dir, len(d.Graphs)) }
