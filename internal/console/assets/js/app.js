// app.js: the console. It talks only to the public HTTP API (api.js);
// all state lives in this page and the token in sessionStorage.
import { Api, ApiError } from './api.js';
import { h, fill, $, cell, when, short } from './dom.js';
import { parseSchema, edgeWord } from './pg.js';
import { parseQueries, matchInfo, inferTypes } from './gq.js';
import { GraphView } from './graph.js';
import { Editor } from './editor.js';
import { changeList, conflictTable } from './changes.js';

const api = new Api();
const state = {
  graphs: [], branches: [], branch: 'main', schema: { nodes: [], edges: [], interfaces: [] }, schemaSource: '',
  stored: [], storedName: '', result: null, resultQuery: null, view: 'table', tab: 'query',
};

const EXAMPLE = `query people() {
    match { $p: Person }
    return { $p.name }
}`;

function status(el, msg, kind = 'info') {
  fill(el, msg ? h('span', { class: 'status-' + kind }, msg) : null);
}

function errorText(err) {
  if (err instanceof ApiError) {
    let s = `${err.status}: ${err.message}`;
    if (err.body.merge_conflicts) s += ` (${err.body.merge_conflicts.length} merge conflicts)`;
    return s;
  }
  return String(err && err.message ? err.message : err);
}

// guard runs an API action, shows its error in el, and sends the user
// back to the login form when the token is missing or no longer valid.
async function guard(el, fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) { showLogin(err.message); return undefined; }
    status(el, errorText(err), 'error');
    return undefined;
  }
}

// ---- login and graph selection ----

function showLogin(msg, needGraph = false) {
  $('login').hidden = false;
  $('app').hidden = true;
  $('login-graph-row').hidden = !needGraph;
  status($('login-status'), msg || '', msg ? 'error' : 'info');
  (needGraph && api.token ? $('login-graph') : $('login-token')).focus();
}

async function boot() {
  const health = await api.health().catch(() => null);
  if (health) $('version').textContent = 'v' + health.version;
  await connect();
}

// connect lists the graphs with the current token; a 401 asks for a
// token, a 403 (the actor may read but not list graphs) for a graph id.
async function connect(graphHint) {
  let graphs;
  try {
    graphs = (await api.graphs()).graphs.map(g => g.graph_id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) { showLogin(api.token ? err.message : ''); return; }
    if (err instanceof ApiError && err.status === 403) {
      const id = graphHint || sessionStorage.getItem('omnigraph.console.graph');
      if (!id) { showLogin('This token may not list graphs: enter the graph id to open.', true); return; }
      graphs = [id];
    } else { showLogin(errorText(err)); return; }
  }
  state.graphs = graphs;
  $('login').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = !api.token;
  const sel = $('graph-select');
  fill(sel, graphs.map(g => h('option', { value: g }, g)));
  const want = graphHint || sessionStorage.getItem('omnigraph.console.graph');
  sel.value = graphs.includes(want) ? want : graphs[0];
  await openGraph(sel.value);
}

async function openGraph(id) {
  api.graph = id;
  sessionStorage.setItem('omnigraph.console.graph', id);
  const st = $('app-status');
  status(st, '');
  const ok = await guard(st, async () => {
    const [schema, branches, stored] = await Promise.all([api.schema(), api.branches(), api.storedQueries()]);
    state.schemaSource = schema.schema_source;
    state.schema = parseSchema(schema.schema_source);
    state.branches = branches.branches;
    state.stored = stored.queries;
    return true;
  });
  if (!ok) return;
  state.branch = state.branches.includes(state.branch) ? state.branch : 'main';
  fillBranchPickers();
  editor.schema = state.schema;
  editor.stored = state.stored.map(q => q.name);
  fill($('stored-select'), h('option', { value: '' }, 'Ad-hoc query (editor)'),
    state.stored.map(q => h('option', { value: q.name }, `${q.name}${q.mutation ? ' (mutation)' : ''}`)));
  selectStored('');
  if (!editor.value.trim()) editor.value = defaultQuery();
  await refreshTab();
}

function defaultQuery() {
  const n = state.schema.nodes[0];
  if (!n) return EXAMPLE;
  const props = n.props.filter(p => !/^(Blob|Vector)/.test(p.type)).slice(0, 4).map(p => `$n.${p.name}`);
  return `query all_${n.name.toLowerCase()}() {\n    match { $n: ${n.name} }\n    return { ${['$n', ...props].join(', ')} }\n    limit 100\n}`;
}

function fillBranchPickers() {
  const opts = () => state.branches.map(b => h('option', { value: b }, b));
  fill($('branch-select'), opts());
  $('branch-select').value = state.branch;
  for (const id of ['diff-from', 'diff-to', 'merge-source', 'merge-target']) {
    const sel = $(id), cur = sel.value;
    fill(sel, opts());
    sel.value = state.branches.includes(cur) ? cur : (id === 'diff-from' || id === 'merge-target' ? 'main' : (state.branches.find(b => b !== 'main') || 'main'));
  }
}

async function refreshBranches() {
  const b = await guard($('app-status'), () => api.branches());
  if (!b) return;
  state.branches = b.branches;
  if (!state.branches.includes(state.branch)) state.branch = 'main';
  fillBranchPickers();
}

// ---- tabs ----

function showTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
  for (const s of document.querySelectorAll('main > section')) s.hidden = s.id !== 'tab-' + tab;
  refreshTab();
}

async function refreshTab() {
  if (state.tab === 'schema') await renderSchema();
  else if (state.tab === 'commits') await renderCommits();
}

// ---- query ----

const editor = new Editor($('editor-box'), {
  onChange: () => renderParams(),
  onRun: () => run(),
  onStored: name => selectStored(name),
});

function selectStored(name) {
  state.storedName = name;
  $('stored-select').value = name;
  $('editor-box').hidden = !!name;
  $('query-name').hidden = !!name;
  const q = state.stored.find(s => s.name === name);
  fill($('stored-info'), q ? [h('strong', {}, q.name), q.description ? ' — ' + q.description : '',
    q.instruction ? h('div', { class: 'muted' }, q.instruction) : null, h('div', { class: 'muted' }, 'Stored query: the server runs it by name.')] : null);
  $('stored-info').hidden = !q;
  renderParams();
}

// currentQuery is the declaration the editor will run (selected by name
// when the source holds several).
function currentQuery() {
  const qs = parseQueries(editor.value);
  const sel = $('query-name');
  const names = qs.map(q => q.name);
  if (sel.dataset.names !== names.join(',')) {
    const cur = sel.value;
    fill(sel, names.map(n => h('option', { value: n }, n)));
    sel.dataset.names = names.join(',');
    if (names.includes(cur)) sel.value = cur;
  }
  sel.hidden = names.length < 2 || !!state.storedName;
  return qs.find(q => q.name === sel.value) || qs[0] || null;
}

// paramSpecs is [{name, type, nullable}] of what will run.
function paramSpecs() {
  if (state.storedName) {
    const q = state.stored.find(s => s.name === state.storedName);
    return q ? q.params.map(p => ({ name: p.name, type: p.kind === 'list' ? `[${p.item_kind}]` : p.kind, nullable: p.nullable })) : [];
  }
  const q = currentQuery();
  return q ? q.params : [];
}

function renderParams() {
  const form = $('params');
  const specs = paramSpecs();
  const old = {};
  for (const inp of form.querySelectorAll('[name]')) old[inp.name] = inp.type === 'checkbox' ? inp.checked : inp.value;
  fill(form, specs.length ? h('div', { class: 'muted' }, 'Parameters') : null, specs.map(p => {
    const t = p.type.toLowerCase();
    const id = 'param-' + p.name;
    let input;
    if (t === 'bool') input = h('input', { type: 'checkbox', id, name: p.name, checked: old[p.name] === true });
    else input = h('input', { type: 'text', id, name: p.name, value: old[p.name] ?? '', placeholder: placeholder(p), 'data-type': p.type });
    return h('label', { class: 'param' }, h('span', {}, `$${p.name}`), h('span', { class: 'ptype' }, p.type + (p.nullable ? '?' : '')), input);
  }));
}

function placeholder(p) {
  const t = p.type.toLowerCase();
  if (t.startsWith('[') || t.startsWith('vector')) return 'JSON array, e.g. [1, 2]';
  if (t === 'date') return 'YYYY-MM-DD';
  if (t === 'datetime') return 'YYYY-MM-DDTHH:MM:SSZ';
  return p.nullable ? 'empty = null' : '';
}

// paramValues converts the form to the JSON params the API takes.
function paramValues() {
  const out = {};
  for (const p of paramSpecs()) {
    const inp = $('param-' + p.name);
    if (!inp) continue;
    const t = p.type.toLowerCase();
    if (t === 'bool') { out[p.name] = inp.checked; continue; }
    const raw = inp.value;
    if (raw === '') { if (p.nullable) out[p.name] = null; else if (/^(string|date|datetime)$/.test(t)) out[p.name] = ''; continue; }
    if (/^[iu](32|64)$/.test(t) || /^f(32|64)$/.test(t)) {
      const n = Number(raw);
      if (Number.isNaN(n)) throw new Error(`$${p.name}: '${raw}' is not a number`);
      out[p.name] = n;
    } else if (t.startsWith('[') || t.startsWith('vector')) {
      try { out[p.name] = JSON.parse(raw); } catch { throw new Error(`$${p.name}: not a JSON array`); }
    } else out[p.name] = raw;
  }
  return out;
}

async function run() {
  const st = $('run-status');
  let params;
  try { params = paramValues(); } catch (err) { status(st, err.message, 'error'); return; }
  status(st, 'Running…');
  // The previous result goes at once, so nothing reads it as this run's.
  state.result = null;
  fill($('result-table'), h('p', { class: 'muted' }, 'Running…'));
  fill($('result-json'));
  graph.clear();
  graph.render();
  const started = performance.now();
  const res = await guard(st, async () => {
    if (state.storedName) {
      return { out: await api.invoke(state.storedName, { params, branch: state.branch }), q: null };
    }
    const q = currentQuery();
    if (!q) throw new Error('the editor holds no query declaration (query name(...) { ... })');
    const body = { query: editor.value, name: q.name, params, branch: state.branch };
    return { out: q.mutation ? await api.mutate(body) : await api.query(body), q };
  });
  if (!res) return;
  const ms = Math.round(performance.now() - started);
  state.result = res.out;
  state.resultQuery = res.q;
  if ('rows' in res.out) status(st, `${res.out.row_count} rows in ${ms} ms`, 'ok');
  else {
    status(st, `${res.out.affected_nodes} nodes and ${res.out.affected_edges} edges changed` + (res.out.commit ? `, commit ${short(res.out.commit.graph_commit_id)}` : ', nothing written'), 'ok');
  }
  renderResult();
}

function setView(v) {
  state.view = v;
  for (const b of document.querySelectorAll('#result-tabs button')) b.classList.toggle('active', b.dataset.view === v);
  renderResult();
}

function renderResult() {
  const r = state.result;
  $('result-table').hidden = state.view !== 'table';
  $('result-graph-box').hidden = state.view !== 'graph';
  $('result-json').hidden = state.view !== 'json';
  if (!r) return;
  if (state.view === 'json') { $('result-json').textContent = JSON.stringify(r, null, 2); return; }
  if (state.view === 'table') {
    if (!('rows' in r)) {
      fill($('result-table'), h('table', { class: 'grid' }, h('tbody', {}, Object.entries({ query: r.query_name, branch: r.branch,
        affected_nodes: r.affected_nodes, affected_edges: r.affected_edges, commit: r.commit ? r.commit.graph_commit_id : null })
        .map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, cell(v)))))));
      return;
    }
    const cols = r.columns || (r.rows[0] ? Object.keys(r.rows[0]) : []);
    fill($('result-table'), r.rows.length === 0 ? h('p', { class: 'muted' }, '(no rows)') :
      h('table', { class: 'grid', id: 'rows' }, h('thead', {}, h('tr', {}, cols.map(c => h('th', {}, c)))),
        h('tbody', {}, r.rows.map(row => h('tr', {}, cols.map(c => h('td', {}, cell(row[c]))))))));
    return;
  }
  buildGraph();
}

// ---- graph view ----

const graph = new GraphView($('result-graph'), node => expand(node));

// buildGraph draws the rows: one node per bound variable of each row
// (identified by its id column `v`, or its @key property), one edge per
// traversal between two drawn variables.
function buildGraph() {
  graph.clear();
  const r = state.result;
  const info = state.resultQuery ? inferTypes(matchInfo(state.resultQuery), state.schema) : { bindings: {}, traversals: [] };
  const cols = r && r.rows ? (r.columns || (r.rows[0] ? Object.keys(r.rows[0]) : [])) : [];
  const vars = new Set();
  for (const c of cols) { const v = c.split('.')[0]; if (c === v || c.startsWith(v + '.')) vars.add(v); }
  for (const row of (r && r.rows) || []) {
    const keys = {};
    for (const v of vars) {
      const type = info.bindings[v];
      if (!type) continue; // not a node variable (an alias, a parameter, an edge)
      const decl = state.schema.nodes.find(n => n.name === type);
      const props = {};
      for (const c of cols) if (c.startsWith(v + '.')) props[c.slice(v.length + 1)] = row[c];
      let id = row[v];
      if (id === undefined && decl && decl.key && props[decl.key] !== undefined) id = props[decl.key];
      if (id === undefined || id === null) continue;
      const label = String(props.name ?? (decl && decl.key ? props[decl.key] : undefined) ?? id);
      const n = graph.addNode({ id: String(id), type, label, props, expandable: !!(decl && decl.key) });
      Object.assign(n.props, props);
      keys[v] = n.key;
    }
    for (const t of info.traversals) {
      if (keys[t.from] && keys[t.to]) graph.addEdge(keys[t.from], keys[t.to], edgeName(t.edge));
    }
  }
  graph.layout();
  graph.render();
  const n = graph.nodes.size;
  status($('graph-status'), n ? `${n} nodes, ${graph.edges.size} edges — click a node to expand its neighbours` :
    'Nothing to draw: project node ids ($v) or key properties of matched node variables.', n ? 'info' : 'error');
}

function edgeName(word) {
  const e = state.schema.edges.find(e => e.name === word) || state.schema.edges.find(e => e.name.toLowerCase() === word.toLowerCase());
  return e ? e.name : word;
}

// expand fetches the neighbours of a node over every edge type that
// touches its type, with one read query per edge direction.
async function expand(node) {
  const decl = state.schema.nodes.find(n => n.name === node.type);
  const st = $('graph-status');
  if (!decl || !decl.key) { status(st, `${node.type} has no @key: its neighbours cannot be looked up by id.`, 'error'); return; }
  const keyProp = decl.props.find(p => p.name === decl.key);
  const keyType = keyProp.type.replace(/\?$/, '');
  let added = 0;
  const ok = await guard(st, async () => {
    for (const e of state.schema.edges) {
      for (const dir of ['out', 'in']) {
        if ((dir === 'out' ? e.from : e.to) !== node.type) continue;
        const other = state.schema.nodes.find(n => n.name === (dir === 'out' ? e.to : e.from));
        if (!other) continue;
        const props = other.props.filter(p => !/^(Blob|Vector)/.test(p.type)).map(p => `$m.${p.name}`);
        const pattern = dir === 'out' ? `$n ${edgeWord(e.name)} $m` : `$m ${edgeWord(e.name)} $n`;
        const src = `query expand($k: ${keyType}) {\n  match { $n: ${node.type} { ${decl.key}: $k }  $m: ${other.name}  ${pattern} }\n  return { ${['$m', ...props].join(', ')} }\n  limit 200\n}`;
        const out = await api.query({ query: src, params: { k: node.props[decl.key] ?? node.id }, branch: state.branch });
        for (const row of out.rows) {
          const p = {};
          for (const [c, v] of Object.entries(row)) if (c.startsWith('m.')) p[c.slice(2)] = v;
          const before = graph.nodes.size;
          const m = graph.addNode({ id: String(row.m), type: other.name, label: String(p.name ?? (other.key ? p[other.key] : row.m)), props: p, expandable: !!other.key }, node.key);
          added += graph.nodes.size - before;
          if (dir === 'out') graph.addEdge(node.key, m.key, e.name); else graph.addEdge(m.key, node.key, e.name);
        }
      }
    }
    return true;
  });
  if (!ok) return;
  node.expanded = true;
  graph.layout(200);
  graph.render();
  status(st, `${node.label}: ${added} new neighbours — ${graph.nodes.size} nodes, ${graph.edges.size} edges`, 'ok');
}

// ---- schema ----

async function renderSchema() {
  const box = $('schema-view'), branch = state.branch;
  const snap = await guard($('app-status'), () => api.snapshot(branch));
  if (!snap || branch !== state.branch) return;
  box.dataset.branch = branch;
  const count = (kind, name) => {
    const d = snap.datasets.find(d => d.entity_kind === kind && d.type_name === name);
    return d ? d.entity_count : 0;
  };
  const propList = props => props.length ? h('ul', { class: 'plist' }, props.map(p => h('li', {}, h('code', {}, p.name), ': ', h('span', { class: 'ptype' }, p.type),
    p.annotations.length ? h('span', { class: 'muted' }, ' ' + p.annotations.join(' ')) : null))) : h('span', { class: 'muted' }, '—');
  fill(box,
    h('p', { class: 'muted' }, `Branch ${state.branch} at commit ${short(snap.graph_commit_id || '')} · ${state.schema.nodes.length} node types, ${state.schema.edges.length} edge types`),
    h('h3', {}, 'Node types'),
    h('table', { class: 'grid', id: 'schema-nodes' }, h('thead', {}, h('tr', {}, ['type', 'key', 'properties', 'count'].map(c => h('th', {}, c)))),
      h('tbody', {}, state.schema.nodes.map(n => h('tr', {}, h('td', {}, h('strong', {}, n.name)), h('td', {}, n.key || '—'),
        h('td', {}, propList(n.props)), h('td', { class: 'num' }, count('node', n.name)))))),
    h('h3', {}, 'Edge types'),
    h('table', { class: 'grid', id: 'schema-edges' }, h('thead', {}, h('tr', {}, ['edge', 'from → to', 'properties', 'count'].map(c => h('th', {}, c)))),
      h('tbody', {}, state.schema.edges.map(e => h('tr', {}, h('td', {}, h('strong', {}, e.name), e.annotations.length ? h('div', { class: 'muted' }, e.annotations.join(' ')) : null),
        h('td', {}, `${e.from} → ${e.to}`), h('td', {}, propList(e.props)), h('td', { class: 'num' }, count('edge', e.name)))))),
    h('details', {}, h('summary', {}, 'Schema source (.pg)'), h('pre', { class: 'source' }, state.schemaSource)));
}

// ---- commits ----

async function renderCommits() {
  const list = $('commit-list'), branch = state.branch;
  const out = await guard($('app-status'), () => api.commits(branch));
  // A newer branch switch wins over a late answer for the old branch.
  if (!out || branch !== state.branch) return;
  list.dataset.branch = branch;
  fill(list, out.commits.map(c => {
    const merge = !!c.merged_parent_commit_id;
    return h('li', { class: 'commit' + (merge ? ' merge' : ''), dataset: { id: c.graph_commit_id } },
      h('button', { class: 'commit-open', onclick: () => openCommit(c) },
        h('span', { class: 'lane' }, merge ? '◆' : '●'), ' ', h('code', {}, short(c.graph_commit_id)), ' ',
        merge ? h('span', { class: 'badge merge' }, 'merge') : null, ' ',
        h('span', { class: 'muted' }, `#${c.graph_manifest_version} · ${c.actor_id || 'no actor'} · ${when(c.created_at)}`),
        merge ? h('div', { class: 'muted merged-from' }, `merged ${short(c.merged_parent_commit_id)} into ${short(c.parent_commit_id)}`) : null));
  }));
  fill($('commit-detail'), h('p', { class: 'muted' }, `${out.commits.length} commits on ${state.branch}, newest first. Select one to see its changes.`));
}

async function openCommit(c, pageToken, into) {
  for (const li of document.querySelectorAll('#commit-list li')) li.classList.toggle('selected', li.dataset.id === c.graph_commit_id);
  const box = $('commit-detail');
  if (!into) {
    fill(box, h('h3', {}, 'Commit ', h('code', {}, c.graph_commit_id)),
      h('table', { class: 'grid meta' }, h('tbody', {}, [['branch', c.graph_branch], ['height', c.graph_manifest_version], ['actor', c.actor_id],
        ['created', when(c.created_at)], ['parent', c.parent_commit_id], ['merged parent', c.merged_parent_commit_id]]
        .filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, String(v)))))),
      into = h('div', { id: 'commit-changes' }));
  }
  try {
    const page = await api.commitChanges(c.graph_commit_id, pageToken);
    const more = page.next_page_token ? h('button', { class: 'more', onclick: ev => { ev.target.remove(); openCommit(c, page.next_page_token, into); } }, 'Load more changes') : null;
    into.appendChild(h('div', {}, changeList(page.changes), more));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) { showLogin(err.message); return; }
    const refusal = err instanceof ApiError && err.body.change_diff_refusal;
    into.appendChild(h('p', { class: refusal ? 'muted' : 'status-error' },
      refusal && refusal.reason === 'parentless_commit' ? 'The first commit of the graph has no parent to compare with.' : errorText(err)));
  }
}

// ---- diff and merge ----

async function runDiff() {
  const from = $('diff-from').value, to = $('diff-to').value, box = $('diff-result');
  status(box, 'Comparing…');
  const out = await guard(box, () => api.diff(from, to));
  if (!out) return;
  fill(box, h('p', { id: 'diff-summary' }, `${out.total} changes from ${from} (${short(out.from_commit_id)}) to ${to} (${short(out.to_commit_id)})` +
    (out.truncated ? `; showing the first ${out.changes.length}` : '')), changeList(out.changes));
}

async function previewMerge() {
  const source = $('merge-source').value, target = $('merge-target').value, box = $('merge-result');
  $('merge-run').disabled = true;
  status(box, 'Planning…');
  const p = await guard(box, () => api.mergePreview(source, target));
  if (!p) return;
  const words = { already_up_to_date: 'already up to date: nothing to merge', fast_forward: 'fast-forward', merged: 'three-way merge' };
  const blocked = p.conflicts.length > 0;
  fill(box,
    h('p', { id: 'merge-outcome' }, h('span', { class: 'badge ' + (blocked ? 'conflict' : 'ok') }, blocked ? `${p.conflicts.length} conflicts` : 'clean'), ' ',
      `${source} → ${target}: ${words[p.outcome]}`, p.merge_base_commit_id ? h('span', { class: 'muted' }, ` (merge base ${short(p.merge_base_commit_id)})`) : null),
    blocked ? [h('h3', {}, 'Conflicts'), h('p', { class: 'muted' }, 'The merge would be refused; resolve these on either branch first.'), conflictTable(p.conflicts)] : null,
    h('h3', {}, `Changes on ${source} since the merge base (${p.total_changes})`), changeList(p.changes));
  $('merge-run').disabled = blocked || p.outcome === 'already_up_to_date';
}

async function runMerge() {
  const source = $('merge-source').value, target = $('merge-target').value, box = $('merge-result');
  $('merge-run').disabled = true;
  const out = await guard(box, () => api.merge(source, target));
  if (!out) return;
  fill(box, h('p', { id: 'merge-outcome' }, h('span', { class: 'badge ok' }, out.outcome), ` merged ${source} into ${target}` +
    (out.commit ? `: commit ${short(out.commit.graph_commit_id)}` : '')));
  await refreshBranches();
}

// ---- wiring ----

$('login-form').addEventListener('submit', async ev => {
  ev.preventDefault();
  const tok = $('login-token').value.trim();
  if (tok) api.token = tok;
  await connect($('login-graph').value.trim() || undefined);
});
$('logout').addEventListener('click', () => {
  api.token = '';
  sessionStorage.removeItem('omnigraph.console.graph');
  $('login-token').value = '';
  showLogin('Signed out.');
});
$('graph-select').addEventListener('change', ev => openGraph(ev.target.value));
$('branch-select').addEventListener('change', ev => { state.branch = ev.target.value; status($('run-status'), `Branch ${state.branch}`); refreshTab(); });
$('stored-select').addEventListener('change', ev => selectStored(ev.target.value));
$('query-name').addEventListener('change', () => renderParams());
$('run').addEventListener('click', () => run());
for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
for (const b of document.querySelectorAll('#result-tabs button')) b.addEventListener('click', () => setView(b.dataset.view));
$('diff-run').addEventListener('click', () => runDiff());
$('merge-preview').addEventListener('click', () => previewMerge());
$('merge-run').addEventListener('click', () => runMerge());
for (const id of ['merge-source', 'merge-target']) $(id).addEventListener('change', () => { $('merge-run').disabled = true; });

editor.value = '';
boot();
