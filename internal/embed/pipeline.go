package embed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec says which fields of which JSONL records `omnigraph embed` embeds:
// for each type, the target property receiving the vector and the source
// fields whose rendered values form the text.
type Spec struct {
	Dimension int                 `json:"dimension" yaml:"dimension"`
	Types     map[string]TypeSpec `json:"types" yaml:"types"`
}

// TypeSpec is the embedding recipe of one type.
type TypeSpec struct {
	Target string   `json:"target" yaml:"target"`
	Fields []string `json:"fields" yaml:"fields"`
}

// Mode is what the pipeline does to selected records.
type Mode string

// Pipeline modes.
const (
	FillMissing Mode = "fill_missing" // embed records whose target is absent, null or []
	ReembedAll  Mode = "reembed_all"  // embed every selected record
	Clean       Mode = "clean"        // remove the target field
	// ReembedSelected is FillMissing with --select: selected records are
	// re-embedded even when they have a vector.
	ReembedSelected Mode = "reembed_selected"
)

// Selector restricts processing to records whose field renders to Value
// (and, when Type is set, of that type): --select Type:field=value.
type Selector struct {
	Type, Field, Value string
}

// ParseSelector parses field=value or Type:field=value.
func ParseSelector(s string) (Selector, error) {
	lhs, val, ok := strings.Cut(s, "=")
	if !ok {
		return Selector{}, &ConfigError{Setting: "--select", Msg: fmt.Sprintf("selector %q must be field=value or Type:field=value", s)}
	}
	sel := Selector{Field: strings.TrimSpace(lhs), Value: strings.TrimSpace(val)}
	if t, f, ok := strings.Cut(lhs, ":"); ok {
		sel.Type, sel.Field = strings.TrimSpace(t), strings.TrimSpace(f)
	}
	if sel.Field == "" {
		return Selector{}, &ConfigError{Setting: "--select", Msg: fmt.Sprintf("selector %q has an empty field", s)}
	}
	return sel, nil
}

// Job is one run of the pipeline.
type Job struct {
	Input, Output string
	Spec          Spec
	Mode          Mode // FillMissing, ReembedAll or Clean
	Types         []string
	Selectors     []Selector
}

// Report is the pipeline's summary (the --json output).
type Report struct {
	Input           string `json:"input"`
	Output          string `json:"output"`
	Records         int    `json:"records"`
	SelectedRecords int    `json:"selected_records"`
	EmbeddedRecords int    `json:"embedded_records"`
	CleanedRecords  int    `json:"cleaned_records"`
	Mode            Mode   `json:"mode"`
	Dimension       int    `json:"dimension"`
	Model           string `json:"model"`
}

// LoadSpec reads a spec JSON file.
func LoadSpec(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("embed: read spec: %w", err)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, &ConfigError{Setting: path, Msg: "bad embedding spec: " + err.Error()}
	}
	return s, s.validate(path)
}

func (s Spec) validate(where string) error {
	if s.Dimension <= 0 {
		return &ConfigError{Setting: where, Msg: "embedding spec needs a positive dimension"}
	}
	if len(s.Types) == 0 {
		return &ConfigError{Setting: where, Msg: "embedding spec names no types"}
	}
	for t, ts := range s.Types {
		if ts.Target == "" || len(ts.Fields) == 0 {
			return &ConfigError{Setting: where, Msg: fmt.Sprintf("type %s needs a target and at least one field", t)}
		}
	}
	return nil
}

// LoadManifest reads a seed manifest (YAML): sources.raw_seed (or
// seed.data) is the input, artifacts.embedded_seed the output (default
// ./build/seed.embedded.jsonl), embeddings the spec; paths are relative to
// the manifest's directory.
func LoadManifest(path string) (input, output string, spec Spec, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", Spec{}, fmt.Errorf("embed: read seed manifest: %w", err)
	}
	var m struct {
		Sources *struct {
			RawSeed string `yaml:"raw_seed"`
		} `yaml:"sources"`
		Artifacts *struct {
			EmbeddedSeed string `yaml:"embedded_seed"`
		} `yaml:"artifacts"`
		Seed *struct {
			Data string `yaml:"data"`
		} `yaml:"seed"`
		Embeddings *Spec `yaml:"embeddings"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return "", "", Spec{}, &ConfigError{Setting: path, Msg: "bad seed manifest: " + err.Error()}
	}
	switch {
	case m.Sources != nil && m.Sources.RawSeed != "":
		input = m.Sources.RawSeed
	case m.Seed != nil && m.Seed.Data != "":
		input = m.Seed.Data
	default:
		return "", "", Spec{}, &ConfigError{Setting: path, Msg: "seed manifest is missing sources.raw_seed"}
	}
	output = "./build/seed.embedded.jsonl"
	if m.Artifacts != nil && m.Artifacts.EmbeddedSeed != "" {
		output = m.Artifacts.EmbeddedSeed
	}
	if m.Embeddings == nil {
		return "", "", Spec{}, &ConfigError{Setting: path, Msg: "seed manifest is missing embeddings"}
	}
	dir := filepath.Dir(path)
	return filepath.Join(dir, input), filepath.Join(dir, output), *m.Embeddings, m.Embeddings.validate(path)
}

// Run streams job.Input to job.Output (written to a temporary file and
// renamed, so a failed run leaves no partial output), embedding or
// cleaning the selected records; c may be nil for Clean. Records without a
// "type" pass through unchanged. Texts are sent in batches of the client's
// Batch size.
func Run(ctx context.Context, c *Client, job Job) (*Report, error) {
	if err := job.Spec.validate("spec"); err != nil {
		return nil, err
	}
	in, err := os.Open(job.Input)
	if err != nil {
		return nil, fmt.Errorf("embed: seed input: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(job.Output), 0o755); err != nil {
		return nil, fmt.Errorf("embed: output directory: %w", err)
	}
	tmp := job.Output + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("embed: output: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			out.Close()
			os.Remove(tmp)
		}
	}()
	rep := &Report{Input: job.Input, Output: job.Output, Mode: job.Mode, Dimension: job.Spec.Dimension}
	if job.Mode == FillMissing && len(job.Selectors) > 0 {
		rep.Mode = ReembedSelected
	}
	if c != nil && job.Mode != Clean {
		rep.Model = c.Model()
	}
	w := bufio.NewWriterSize(out, 1<<20)
	p := &pipeline{ctx: ctx, c: c, job: job, rep: rep, w: w}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := p.record(line, raw); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: read input: %w", err)
	}
	if err := p.flush(); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, job.Output); err != nil {
		return nil, err
	}
	ok = true
	return rep, nil
}

type pending struct {
	rec    map[string]any
	data   map[string]any
	target string
	text   string
}

type pipeline struct {
	ctx  context.Context
	c    *Client
	job  Job
	rep  *Report
	w    io.Writer
	held []pending // records waiting for the batch (order kept: all later records wait too)
	tail [][]byte
}

func (p *pipeline) record(line int, raw []byte) error {
	var rec map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		return &ConfigError{Setting: fmt.Sprintf("%s line %d", p.job.Input, line), Msg: "not a JSON object: " + err.Error()}
	}
	p.rep.Records++
	typ, _ := rec["type"].(string)
	if typ == "" {
		return p.emit(rec, nil)
	}
	data, isObj := rec["data"].(map[string]any)
	if !isObj {
		return &ConfigError{Setting: fmt.Sprintf("%s line %d", p.job.Input, line), Msg: "record is missing object field 'data'"}
	}
	selected := p.selected(typ, data)
	if selected {
		p.rep.SelectedRecords++
	}
	ts, has := p.job.Spec.Types[typ]
	if !has || !selected {
		return p.emit(rec, nil)
	}
	switch p.job.Mode {
	case Clean:
		if _, ok := data[ts.Target]; ok {
			delete(data, ts.Target)
			p.rep.CleanedRecords++
		}
		return p.emit(rec, nil)
	case FillMissing:
		if len(p.job.Selectors) == 0 && !missing(data[ts.Target]) {
			return p.emit(rec, nil)
		}
	}
	text := embeddingText(typ, data, ts.Fields)
	return p.emit(rec, &pending{rec: rec, data: data, target: ts.Target, text: text})
}

// emit writes rec, or holds it (and everything after it) until the batch
// of pending texts is embedded.
func (p *pipeline) emit(rec map[string]any, pd *pending) error {
	if pd != nil {
		p.held = append(p.held, *pd)
	} else if len(p.held) > 0 {
		p.held = append(p.held, pending{rec: rec})
	} else {
		return writeRecord(p.w, rec)
	}
	n := 0
	for _, h := range p.held {
		if h.data != nil {
			n++
		}
	}
	if n >= p.c.cfg.Batch {
		return p.flush()
	}
	return nil
}

func (p *pipeline) flush() error {
	var texts []string
	for _, h := range p.held {
		if h.data != nil {
			texts = append(texts, h.text)
		}
	}
	if len(texts) > 0 {
		vecs, err := p.c.Embed(p.ctx, texts, p.job.Spec.Dimension)
		if err != nil {
			return err
		}
		k := 0
		for _, h := range p.held {
			if h.data != nil {
				h.data[h.target] = vecs[k]
				k++
			}
		}
		p.rep.EmbeddedRecords += len(texts)
	}
	for _, h := range p.held {
		if err := writeRecord(p.w, h.rec); err != nil {
			return err
		}
	}
	p.held = p.held[:0]
	return nil
}

func writeRecord(w io.Writer, rec map[string]any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func (p *pipeline) selected(typ string, data map[string]any) bool {
	if len(p.job.Types) > 0 && !slices.Contains(p.job.Types, typ) {
		return false
	}
	if len(p.job.Selectors) == 0 {
		return true
	}
	for _, s := range p.job.Selectors {
		if (s.Type == "" || s.Type == typ) && func() bool { v, ok := data[s.Field]; return ok && render(v) == s.Value }() {
			return true
		}
	}
	return false
}

func missing(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

// render is a field's text: strings trimmed, lists joined with ", ".
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case []any:
		var parts []string
		for _, e := range x {
			if s := render(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// embeddingText is "type: T" followed by "field: value" lines of the
// non-empty source fields.
func embeddingText(typ string, data map[string]any, fields []string) string {
	parts := []string{"type: " + typ}
	for _, f := range fields {
		if v, ok := data[f]; ok {
			if s := render(v); s != "" {
				parts = append(parts, f+": "+s)
			}
		}
	}
	return strings.Join(parts, "\n")
}
