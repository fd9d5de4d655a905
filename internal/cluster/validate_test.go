package cluster

import (
	"strings"
	"testing"
)

func TestValidateOK(t *testing.T) {
	dir := writeCluster(t, nil)
	r := Validate(t.Context(), dir)
	mustOK(t, r.Report)
	want := "graph.knowledge,policy.base,query.knowledge.add_person,query.knowledge.get_person,schema.knowledge"
	if got := strings.Join(r.Resources, ","); got != want {
		t.Errorf("resources %s, want %s", got, want)
	}
}

func TestValidateDiagnostics(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string // code that must appear as an error
	}{
		{"missing config", map[string]string{"cluster.yaml": "", "x": "y"}, CodeConfigMissing},
		{"reserved key", map[string]string{"cluster.yaml": testClusterYAML + "pipelines: {}\n"}, CodeUnsupportedConfig},
		{"unknown key", map[string]string{"cluster.yaml": testClusterYAML + "extra: 1\n"}, CodeUnsupportedConfig},
		{"unknown graph key", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: knowledge.pg\n    stream: true\n"}, CodeUnsupportedConfig},
		{"duplicate key", map[string]string{"cluster.yaml": "version: 1\nversion: 1\n"}, CodeConfigParse},
		{"bad version", map[string]string{"cluster.yaml": "version: 2\n"}, CodeConfigParse},
		{"missing schema file", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: nope.pg\n"}, CodeFileMissing},
		{"bad schema", map[string]string{"knowledge.pg": "node {"}, CodeSchemaParse},
		{"query parse error", map[string]string{"queries/people.gq": "query ("}, CodeQueryParse},
		{"query type error", map[string]string{"queries/people.gq": "query q() { match { $p: Nobody } return { $p.name } }\n"}, CodeQueryType},
		{"duplicate query name", map[string]string{"queries/more.gq": testQueries}, CodeDuplicateQueryName},
		{"named query missing", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: knowledge.pg\n    queries: {nope: {file: queries/people.gq}}\n"}, CodeQueryParse},
		{"invalid graph id", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  healthz:\n    schema: knowledge.pg\n"}, CodeInvalidGraphID},
		{"policy parse", map[string]string{"base.policy.yaml": "version: 1\nrules: [{id: r, allow: {actors: {group: nobody}, actions: [read]}}]\n"}, CodePolicyParse},
		{"policy unknown graph", map[string]string{"cluster.yaml": strings.Replace(testClusterYAML, "applies_to: [knowledge]", "applies_to: [other]", 1)}, CodePolicyBinding},
		{"graph bundle on cluster", map[string]string{"cluster.yaml": strings.Replace(testClusterYAML, "applies_to: [knowledge]", "applies_to: [cluster]", 1)}, CodePolicyBinding},
		{"two bundles one scope", map[string]string{"cluster.yaml": testClusterYAML + "  second:\n    file: base.policy.yaml\n    applies_to: [knowledge]\n"}, CodePolicyBinding},
		{"inline secret", map[string]string{"cluster.yaml": testClusterYAML + "providers:\n  embedding:\n    default: {kind: openai, model: m, api_key: sk-123}\n"}, CodeProvider},
		{"unknown provider ref", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: knowledge.pg\n    embedding_provider: nope\n"}, CodeProvider},
		{"bad blob scope", map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: knowledge.pg\n    external_blobs: {allow: [{base: 's3://a/', scope: everywhere}]}\n"}, CodeExternalBlob},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeCluster(t, c.files)
			if c.files["cluster.yaml"] == "" && c.want == CodeConfigMissing {
				dir = t.TempDir()
			}
			r := Validate(t.Context(), dir)
			if r.OK {
				t.Fatalf("validated; diagnostics %v", r.Diagnostics)
			}
			if !strings.Contains(codes(r.Diagnostics), "error:"+c.want) {
				t.Errorf("diagnostics %v lack error %s", r.Diagnostics, c.want)
			}
		})
	}
}

func TestValidateQueryForms(t *testing.T) {
	for name, q := range map[string]string{
		"directory": "queries/",
		"list":      "[queries/people.gq]",
		"map":       "{get_person: {file: queries/people.gq}}",
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeCluster(t, map[string]string{"cluster.yaml": "version: 1\ngraphs:\n  g:\n    schema: knowledge.pg\n    queries: " + q + "\n"})
			r := Validate(t.Context(), dir)
			mustOK(t, r.Report)
			if !strings.Contains(strings.Join(r.Resources, ","), "query.g.get_person") {
				t.Errorf("resources %v", r.Resources)
			}
			if name == "map" && strings.Contains(strings.Join(r.Resources, ","), "add_person") {
				t.Errorf("map form registered an unnamed query: %v", r.Resources)
			}
		})
	}
}
