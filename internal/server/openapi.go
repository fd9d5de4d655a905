package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

// openAPIDocument renders /openapi.json from the route table: every route
// is one operation, every request and response type one component schema
// derived from its Go type. On an open server the security scheme and the
// per-operation security requirements are left out.
func (s *Server) openAPIDocument() ([]byte, error) {
	g := &schemaGen{schemas: map[string]any{}}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		op := map[string]any{"operationId": rt.opID, "summary": rt.summary, "tags": []string{rt.tag}}
		var params []any
		for _, name := range pathParams(rt.path) {
			params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, p := range rt.query {
			params = append(params, paramDoc(p, "query"))
		}
		for _, p := range rt.headers {
			params = append(params, paramDoc(p, "header"))
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		switch b := rt.body.(type) {
		case nil:
		case ndjsonBody:
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/x-ndjson": map[string]any{"schema": map[string]any{"type": "string"}}}}
		default:
			op["requestBody"] = map[string]any{"required": !rt.optionalBody, "content": map[string]any{
				"application/json": map[string]any{"schema": g.ref(reflect.TypeOf(b))}}}
		}
		resps := map[string]any{}
		ok := map[string]any{"description": "OK"}
		switch {
		case rt.resp != nil && rt.respAlt != nil:
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{
				"oneOf": []any{g.ref(reflect.TypeOf(rt.resp)), g.ref(reflect.TypeOf(rt.respAlt))}}}}
		case rt.resp != nil:
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.ref(reflect.TypeOf(rt.resp))}}
		case rt.respType != "":
			ok["content"] = map[string]any{rt.respType: map[string]any{"schema": map[string]any{}}}
		}
		if rt.successor != "" {
			op["deprecated"] = true
			ok["headers"] = map[string]any{
				"Deprecation": map[string]any{"schema": map[string]any{"type": "string"}, "description": "The literal value `true`."},
				"Link":        map[string]any{"schema": map[string]any{"type": "string"}, "description": "The successor route, rel=\"successor-version\"."},
			}
		}
		resps["200"] = ok
		errRef := map[string]any{"application/json": map[string]any{"schema": g.ref(reflect.TypeOf(ErrorOutput{}))}}
		statuses := append([]int(nil), rt.statuses...)
		if !rt.public {
			statuses = append(statuses, http.StatusUnauthorized, http.StatusForbidden)
			if s.mode != ModeOpen {
				op["security"] = []any{map[string]any{"bearer_token": []string{}}}
			}
		}
		if rt.perGraph {
			statuses = append(statuses, http.StatusNotFound)
		}
		for _, st := range statuses {
			resps[strconv.Itoa(st)] = map[string]any{"description": http.StatusText(st), "content": errRef}
		}
		op["responses"] = resps
		key := openAPIPath(rt.path)
		if paths[key] == nil {
			paths[key] = map[string]any{}
		}
		paths[key][strings.ToLower(rt.method)] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Omnigraph API", "version": omnigraph.Version,
			"description": "HTTP API of omnigraph-server: typed property graphs with Git-style branches and commits."},
		"paths":      paths,
		"components": map[string]any{"schemas": g.schemas},
	}
	if s.mode != ModeOpen {
		doc["components"].(map[string]any)["securitySchemes"] = map[string]any{"bearer_token": map[string]any{"type": "http", "scheme": "bearer"}}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// openAPIPath turns a ServeMux pattern into an OpenAPI path template
// ("{branch...}" → "{branch}").
func openAPIPath(p string) string { return strings.ReplaceAll(p, "...}", "}") }

func pathParams(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	return out
}

func paramDoc(p param, in string) map[string]any {
	sch := map[string]any{"type": "string"}
	if len(p.enum) > 0 {
		sch["enum"] = p.enum
	}
	if p.repeat {
		sch = map[string]any{"type": "array", "items": sch}
	}
	d := map[string]any{"name": p.name, "in": in, "required": p.required, "schema": sch}
	if p.desc != "" {
		d["description"] = p.desc
	}
	return d
}

// schemaGen derives JSON Schemas from the wire types' Go types and json
// and openapi struct tags.
type schemaGen struct {
	schemas map[string]any
}

func (g *schemaGen) ref(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return g.schema(t)
	}
	name := t.Name()
	if name == "orderedRow" {
		return map[string]any{"type": "object", "description": "One result row: column name to value, in column order."}
	}
	if _, done := g.schemas[name]; !done {
		g.schemas[name] = nil // break cycles
		g.schemas[name] = g.object(t)
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		o["required"] = required
	}
	return o
}

// fields adds the properties of struct t to props; the fields of an
// embedded struct are its own, as encoding/json flattens them.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			g.fields(f.Type, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		tags := f.Tag.Get("openapi")
		if tags == "-" {
			continue
		}
		var sch map[string]any
		nullable := f.Type.Kind() == reflect.Pointer
		if nullable {
			sch = g.ref(f.Type.Elem())
		} else {
			sch = g.ref(f.Type)
		}
		for _, opt := range strings.Split(tags, ",") {
			switch {
			case opt == "required":
				*required = append(*required, name)
			case strings.HasPrefix(opt, "enum="):
				sch = map[string]any{"type": "string", "enum": strings.Split(strings.TrimPrefix(opt, "enum="), "|")}
			}
		}
		if nullable {
			if typ, ok := sch["type"].(string); ok {
				sch = copyMap(sch)
				sch["type"] = []string{typ, "null"}
			} else {
				sch = map[string]any{"oneOf": []any{map[string]any{"type": "null"}, sch}}
			}
		}
		props[name] = sch
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.ref(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		return g.ref(t)
	}
	panic(fmt.Sprintf("openapi: no schema for %s", t))
}
