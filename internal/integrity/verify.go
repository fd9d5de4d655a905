package integrity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Problem kinds.
const (
	KindMissing = "missing" // an object something reachable names does not exist
	KindCorrupt = "corrupt" // an object exists but fails its checks
	KindError   = "error"   // the object could not be read (I/O, permissions)
)

// Problem is one damaged or missing object.
type Problem struct {
	Object string `json:"object"`           // the object key, e.g. "commits/01….json"
	Kind   string `json:"kind"`             // KindMissing, KindCorrupt or KindError
	Detail string `json:"detail"`           // what is wrong
	Via    string `json:"via,omitempty"`    // what names it (a ref, commit or state), if anything
	Branch string `json:"branch,omitempty"` // the branch whose history reaches it, when one does
}

// Counts tallies objects by kind.
type Counts struct {
	Refs            int `json:"refs"`
	Commits         int `json:"commits"`
	Schemas         int `json:"schemas"`
	States          int `json:"table_states"`
	Fragments       int `json:"fragments"`
	DeletionVectors int `json:"deletion_vectors"`
	Indexes         int `json:"indexes"`
	Other           int `json:"other,omitempty"`
}

// Report is the result of Verify.
type Report struct {
	Deep bool `json:"deep"`
	// Checked counts the reachable objects verified.
	Checked Counts `json:"checked"`
	// Unreachable counts stored objects no ref reaches: leftovers of failed
	// or lost writes and of deleted branches, which cleanup reclaims after
	// its grace period. They are not problems.
	Unreachable Counts `json:"unreachable"`
	// Unchecksummed counts reachable commits and refs written before
	// checksums existed (graphs created before; verified structurally).
	Unchecksummed int `json:"unchecksummed"`
	// Reclaimed counts reachable commits whose data cleanup removed (they
	// stay in history; reading them fails with "removed by cleanup").
	Reclaimed int       `json:"reclaimed_commits"`
	Problems  []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Options tune Verify.
type Options struct {
	// Deep also decodes every column of every reachable fragment.
	Deep bool
}

// verifier carries one run's state. Every object is checked once.
type verifier struct {
	ctx  context.Context
	st   storage.Store
	repo *commit.Repo
	opts Options
	rep  *Report

	commits   map[commit.ID]bool
	schemas   map[string]*schema.Catalog // nil value: unreadable
	states    map[string][]Problem       // checked states and what was wrong with them or what they name
	objects   map[string][]Problem       // checked fragments, deletion vectors and indexes
	fragments map[string]bool
	dvs       map[string]bool
	indexes   map[string]bool
	heads     map[commit.ID]bool
	problems  map[string]bool // object+detail already reported
}

// Verify checks, read-only, that every ref, every commit reachable from a
// ref, and every schema, table state, fragment, deletion vector and index
// those commits name is present and intact; with Deep it decodes every
// fragment's data too. It counts stored objects no ref reaches. It never
// writes. An error is returned only when the graph cannot be verified at
// all (no stamp, or a stamp of another format version); damage is reported
// in Report.Problems.
func Verify(ctx context.Context, st storage.Store, opts Options) (*Report, error) {
	rep := &Report{Deep: opts.Deep, Problems: []Problem{}}
	repo, err := commit.OpenUnchecked(ctx, st, commit.Options{ReadOnly: true})
	if err != nil {
		if errors.Is(err, commit.ErrCorrupt) {
			rep.Problems = append(rep.Problems, Problem{Object: commit.StampKey, Kind: KindCorrupt, Detail: detailOf(err)})
			return rep, nil
		}
		return nil, err
	}
	v := newVerifier(ctx, st, repo, opts, rep)
	if err := v.run(); err != nil {
		return nil, err
	}
	sort.Slice(rep.Problems, func(i, j int) bool {
		a, b := rep.Problems[i], rep.Problems[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Detail < b.Detail
	})
	return rep, nil
}

func newVerifier(ctx context.Context, st storage.Store, repo *commit.Repo, opts Options, rep *Report) *verifier {
	return &verifier{ctx: ctx, st: st, repo: repo, opts: opts, rep: rep,
		commits: map[commit.ID]bool{}, schemas: map[string]*schema.Catalog{}, states: map[string][]Problem{},
		objects: map[string][]Problem{}, fragments: map[string]bool{}, dvs: map[string]bool{}, indexes: map[string]bool{},
		heads: map[commit.ID]bool{}, problems: map[string]bool{}}
}

func (v *verifier) problem(p Problem) {
	k := p.Object + "\x00" + p.Detail
	if v.problems[k] {
		return
	}
	v.problems[k] = true
	v.rep.Problems = append(v.rep.Problems, p)
}

// detailOf is an error's message without the "corrupt object <key>" prefix
// the Problem's Object already gives.
func detailOf(err error) string {
	var te *table.CorruptError
	if errors.As(err, &te) && err == error(te) {
		msg := te.Reason
		if te.Err != nil {
			msg += ": " + te.Err.Error()
		}
		return msg
	}
	return err.Error()
}

// classify turns a read error into a problem kind.
func classify(err error) string {
	switch {
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, commit.ErrCommitNotFound):
		return KindMissing
	case errors.Is(err, table.ErrCorrupt), errors.Is(err, table.ErrUnsupportedVersion):
		return KindCorrupt
	}
	return KindError
}

func (v *verifier) run() error {
	refKeys, err := v.repo.RefKeys(v.ctx)
	if err != nil {
		return err
	}
	hasMain := false
	type tip struct {
		branch string
		id     commit.ID
	}
	var tips []tip
	for _, key := range refKeys {
		branch := strings.TrimPrefix(key, "refs/heads/")
		hasMain = hasMain || branch == commit.MainBranch
		v.rep.Checked.Refs++
		h, err := v.repo.Head(v.ctx, branch)
		if err != nil {
			v.problem(Problem{Object: key, Kind: classify(err), Detail: detailOf(err), Branch: branch})
			continue
		}
		if !v.repo.Strict() && !refSummed(v.ctx, v.st, key) {
			v.rep.Unchecksummed++
		}
		tips = append(tips, tip{branch, h.Commit})
	}
	if !hasMain {
		v.problem(Problem{Object: commit.RefKey(commit.MainBranch), Kind: KindMissing, Branch: commit.MainBranch,
			Detail: "the main ref does not exist; `omnigraph repair` restores it from the newest intact commit of main"})
	}
	for _, t := range tips {
		v.heads[t.id] = true
	}
	for _, t := range tips {
		v.walk(t.branch, t.id, commit.RefKey(t.branch))
	}
	return v.countUnreachable()
}

// walk checks every commit reachable from id and everything they name.
func (v *verifier) walk(branch string, id commit.ID, via string) {
	type item struct {
		id  commit.ID
		via string
	}
	stack := []item{{id, via}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.commits[it.id] {
			continue
		}
		v.commits[it.id] = true
		v.rep.Checked.Commits++
		key := commit.CommitKey(it.id)
		c, err := v.repo.Commit(v.ctx, it.id)
		if err != nil {
			v.problem(Problem{Object: key, Kind: classify(err), Detail: detailOf(err), Via: it.via, Branch: branch})
			continue
		}
		if !c.Checksummed() {
			v.rep.Unchecksummed++
		}
		var want uint64
		for _, p := range c.Parents {
			if pc, err := v.repo.Commit(v.ctx, p); err == nil {
				want = max(want, pc.Height+1)
			}
			stack = append(stack, item{p, key})
		}
		if len(c.Parents) > 0 && want > 0 && c.Height != want {
			v.problem(Problem{Object: key, Kind: KindCorrupt, Branch: branch,
				Detail: fmt.Sprintf("height %d, its parents imply %d", c.Height, want)})
		}
		probs := v.checkCommit(c)
		if len(probs) > 0 && !v.heads[it.id] && onlyMissing(probs) {
			// Data removed by cleanup is not damage; the marker says which.
			if ok, err := v.repo.Reclaimed(v.ctx, it.id); err == nil && ok {
				v.rep.Reclaimed++
				continue
			}
		}
		for _, p := range probs {
			p.Branch = branch
			v.problem(p)
		}
	}
}

// CheckCommit checks one decoded commit's own objects: its schema source
// (present, hash, compiles), its table map against that schema, and every
// table state it names with the state's fragments, deletion vectors and
// indexes (deep: fragment data decoded too). It returns the problems found;
// none means a reader of this commit finds everything it names intact.
func CheckCommit(ctx context.Context, st storage.Store, repo *commit.Repo, c *commit.Commit, deep bool) []Problem {
	return newVerifier(ctx, st, repo, Options{Deep: deep}, &Report{}).checkCommit(c)
}

// checkCommit is CheckCommit within one run: objects checked earlier in the
// run are not checked (or reported) again.
func (v *verifier) checkCommit(c *commit.Commit) []Problem {
	memo, ctx, repo := v, v.ctx, v.repo
	var out []Problem
	key := commit.CommitKey(c.ID)
	cat, checked := memo.schemas[c.Schema]
	if !checked {
		memo.rep.Checked.Schemas++
		src, err := repo.Schema(ctx, c.Schema)
		if err != nil {
			out = append(out, Problem{Object: c.Schema, Kind: classify(err), Detail: detailOf(err), Via: key})
		} else if cat, err = schema.Compile("schema.pg", string(src)); err != nil {
			out = append(out, Problem{Object: c.Schema, Kind: KindCorrupt, Detail: "stored schema does not compile: " + err.Error(), Via: key})
			cat = nil
		}
		memo.schemas[c.Schema] = cat
	}
	if cat != nil {
		if err := commit.CheckTables(c, TableStatePrefixes(cat)); err != nil {
			out = append(out, Problem{Object: key, Kind: KindCorrupt, Detail: detailOf(err)})
		}
	}
	names := make([]string, 0, len(c.Tables))
	for name := range c.Tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, memo.checkState(c.Tables[name], key)...)
	}
	return out
}

// onlyMissing reports whether every problem is a missing object.
func onlyMissing(probs []Problem) bool {
	for _, p := range probs {
		if p.Kind != KindMissing {
			return false
		}
	}
	return true
}

// checkState checks a table state and everything it names, once per run;
// later calls return the same problems.
func (v *verifier) checkState(key, via string) []Problem {
	if probs, done := v.states[key]; done {
		return probs
	}
	v.rep.Checked.States++
	s, err := table.ReadState(v.ctx, v.st, key)
	if err != nil {
		probs := []Problem{{Object: key, Kind: classify(err), Detail: detailOf(err), Via: via}}
		v.states[key] = probs
		return probs
	}
	var out []Problem
	sch := s.Schema()
	for _, f := range s.Fragments() {
		out = append(out, v.once(f.Key, v.fragments, &v.rep.Checked.Fragments, func() error {
			return table.VerifyFragment(v.ctx, v.st, sch, stripDV(f), v.opts.Deep)
		}, key)...)
		if f.DV != "" {
			out = append(out, v.once(f.DV, v.dvs, &v.rep.Checked.DeletionVectors, func() error {
				return table.VerifyDeletionVector(v.ctx, v.st, f)
			}, key)...)
		}
		if f.Index != "" {
			// The fragment's own index (table-state format 2).
			out = append(out, v.once(f.Index, v.indexes, &v.rep.Checked.Indexes, func() error {
				return table.VerifyFragmentIndex(v.ctx, v.st, f)
			}, key)...)
		}
	}
	for _, ref := range s.Indexes() {
		out = append(out, v.once(ref.Key, v.indexes, &v.rep.Checked.Indexes, func() error {
			return v.checkIndex(ref)
		}, key)...)
	}
	v.states[key] = out
	return out
}

// once runs check for object key the first time it is named, counting it,
// and returns its problems every time.
func (v *verifier) once(key string, seen map[string]bool, count *int, check func() error, via string) []Problem {
	if seen[key] {
		return v.objects[key]
	}
	seen[key] = true
	*count++
	if err := check(); err != nil {
		v.objects[key] = []Problem{{Object: key, Kind: classify(err), Detail: detailOf(err), Via: via}}
	}
	return v.objects[key]
}

// stripDV returns f without its deletion vector: VerifyFragment checks the
// data file alone, VerifyDeletionVector the vector.
func stripDV(f table.Fragment) table.Fragment {
	f.DV, f.Deleted = "", 0
	return f
}

// checkIndex checks one index object a state names.
func (v *verifier) checkIndex(ref table.IndexRef) error {
	switch ref.Kind {
	case index.KindKey:
		ki, err := index.ReadKey(v.ctx, v.st, ref.Key)
		if err != nil {
			return err
		}
		got, want := ki.Fragments(), append([]string(nil), ref.Fragments...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return &table.CorruptError{Key: ref.Key, Offset: -1,
				Reason: fmt.Sprintf("index covers fragments %v, the state says %v", got, want)}
		}
		return nil
	case index.KindText, index.KindBTree:
		b, _, err := v.st.Get(v.ctx, ref.Key)
		if err != nil {
			return err
		}
		rows, err := verifyWhole(ref, b)
		if err != nil {
			return err
		}
		return coversOne(ref, rows)
	case index.KindVector:
		x, err := index.ReadVector(v.ctx, v.st, ref.Key)
		if err != nil {
			return err
		}
		return coversOne(ref, x.Rows())
	}
	// An index kind this verifier does not decode: check it is present.
	_, err := v.st.Stat(v.ctx, ref.Key)
	return err
}

// verifyWhole checks every piece of a full-text or scalar index object b
// and returns the rows it covers.
func verifyWhole(ref table.IndexRef, b []byte) (int, error) {
	if ref.Kind == index.KindBTree {
		x, err := index.VerifyBTree(ref.Key, b)
		if err != nil {
			return 0, err
		}
		return x.Rows(), nil
	}
	x, err := index.VerifyText(ref.Key, b)
	if err != nil {
		return 0, err
	}
	return x.Rows(), nil
}

// countUnreachable lists every stored object and counts those no ref reaches.
func (v *verifier) countUnreachable() error {
	reachSchemas := map[string]bool{}
	for k := range v.schemas {
		reachSchemas[k] = true
	}
	u := &v.rep.Unreachable
	return v.st.List(v.ctx, "", "", func(info storage.Info) error {
		k := info.Key
		switch {
		case k == commit.StampKey, strings.HasPrefix(k, "refs/"), strings.HasPrefix(k, "reclaimed/"), strings.HasPrefix(k, "."):
		case strings.HasPrefix(k, "commits/"):
			if id, ok := commitIDOf(k); !ok || !v.commits[id] {
				u.Commits++
			}
		case strings.HasPrefix(k, "schemas/"):
			if !reachSchemas[k] {
				u.Schemas++
			}
		case strings.HasPrefix(k, "tables/") && strings.Contains(k, "/state/"):
			if _, ok := v.states[k]; !ok {
				u.States++
			}
		case strings.HasPrefix(k, "tables/") && strings.Contains(k, "/data/"):
			if !v.fragments[k] {
				u.Fragments++
			}
		case strings.HasPrefix(k, "tables/") && strings.Contains(k, "/dv/"):
			if !v.dvs[k] {
				u.DeletionVectors++
			}
		case strings.HasPrefix(k, "tables/") && strings.Contains(k, "/index/"):
			if !v.indexes[k] {
				u.Indexes++
			}
		default:
			u.Other++
		}
		return nil
	})
}

func commitIDOf(key string) (commit.ID, bool) {
	name := strings.TrimSuffix(strings.TrimPrefix(key, "commits/"), ".json")
	id, err := commit.ParseID(name)
	return id, err == nil && commit.CommitKey(id) == key
}

// refSummed reports whether a ref object carries a checksum (legacy graphs
// only; on strict graphs Head already refuses one without).
func refSummed(ctx context.Context, st storage.Store, key string) bool {
	data, _, err := st.Get(ctx, key)
	return err == nil && strings.Contains(string(data), `"sum":"`)
}

// TableStatePrefixes maps every table of a catalog to the key prefix of its
// state objects: node type T is table "node:T" with states under
// "tables/node-T/state/", edge type E is "edge:E" under "tables/edge-E/state/"
// (docs/format/commit.md §3). The engine's writer has its own copy of this
// naming (internal/exec); verifying a healthy graph pins that they agree
// (TestVerifyHealthy).
func TableStatePrefixes(cat *schema.Catalog) map[string]string {
	out := make(map[string]string, len(cat.Nodes)+len(cat.Edges))
	for _, n := range cat.Nodes {
		out["node:"+n.Name] = "tables/node-" + n.Name + "/state/"
	}
	for _, e := range cat.Edges {
		out["edge:"+e.Name] = "tables/edge-" + e.Name + "/state/"
	}
	return out
}

// coversOne checks that a per-fragment search index names exactly one
// fragment (its row count is checked against the fragment by the state's
// own verification of that fragment).
func coversOne(ref table.IndexRef, rows int) error {
	if len(ref.Fragments) != 1 || rows <= 0 {
		return &table.CorruptError{Key: ref.Key, Offset: -1,
			Reason: fmt.Sprintf("search index covers %d rows of fragments %v, want one fragment", rows, ref.Fragments)}
	}
	return nil
}
