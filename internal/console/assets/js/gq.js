// gq.js: the console's view of .gq text: a lexer for highlighting, a
// reader of query signatures (for the parameters form) and of match
// patterns (for the graph view), and schema-driven completion. The server
// compiles and type-checks every query; nothing here decides validity.

export const KEYWORDS = ['query', 'match', 'return', 'order', 'limit', 'insert', 'update', 'delete', 'set', 'where',
  'not', 'asc', 'desc', 'as', 'true', 'false', 'contains', 'starts_with'];
export const FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max', 'date', 'datetime', 'now', 'search', 'fuzzy',
  'match_text', 'bm25', 'nearest', 'rrf'];
const BASE_TYPES = ['String', 'Bool', 'I32', 'I64', 'U32', 'U64', 'F32', 'F64', 'Date', 'DateTime', 'Blob', 'Vector'];

// lex splits source into tokens {type, text, start, end} covering every
// byte, whitespace included, so highlighting can rebuild the text exactly.
export function lex(src) {
  const out = [];
  let i = 0;
  const push = (type, end) => { out.push({ type, text: src.slice(i, end), start: i, end }); i = end; };
  while (i < src.length) {
    const c = src[i];
    const rest = src.slice(i, i + 256);
    let m;
    if ((m = /^\s+/.exec(rest))) push('ws', i + m[0].length);
    else if (src.startsWith('//', i)) { const j = src.indexOf('\n', i); push('comment', j < 0 ? src.length : j); }
    else if (src.startsWith('/*', i)) { const j = src.indexOf('*/', i + 2); push('comment', j < 0 ? src.length : j + 2); }
    else if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"' && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      push('string', Math.min(j + 1, src.length));
    } else if ((m = /^\$[A-Za-z_][A-Za-z0-9_]*/.exec(rest)) || c === '$') push('variable', i + (m ? m[0].length : 1));
    else if ((m = /^[0-9]+(\.[0-9]+)?/.exec(rest))) push('number', i + m[0].length);
    else if ((m = /^@[A-Za-z_][A-Za-z0-9_]*/.exec(rest))) push('annotation', i + m[0].length);
    else if ((m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest))) {
      const w = m[0];
      const after = src.slice(i + w.length).match(/^\s*\(/);
      let type = 'ident';
      if (KEYWORDS.includes(w)) type = 'keyword';
      else if (after && FUNCTIONS.includes(w)) type = 'function';
      else if (/^[A-Z]/.test(w)) type = 'type';
      push(type, i + w.length);
    } else push('punct', i + 1);
  }
  return out;
}

const escapeHTML = s => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// highlight renders source as HTML: every token escaped, each non-space
// token in a span whose class names its kind.
export function highlight(src) {
  let html = '';
  for (const t of lex(src)) {
    html += t.type === 'ws' || t.type === 'punct' ? escapeHTML(t.text) : `<span class="tok-${t.type}">${escapeHTML(t.text)}</span>`;
  }
  // A trailing newline needs content to keep the last line's height.
  return html + '\n';
}

// significant drops whitespace and comments.
const significant = toks => toks.filter(t => t.type !== 'ws' && t.type !== 'comment');

// closeOf returns the index of the bracket closing the one at i.
function closeOf(toks, i) {
  const open = toks[i].text, close = { '{': '}', '(': ')', '[': ']' }[open];
  let depth = 0;
  for (let j = i; j < toks.length; j++) {
    if (toks[j].text === open) depth++;
    else if (toks[j].text === close && --depth === 0) return j;
  }
  return toks.length - 1;
}

// parseQueries reads every query declaration: its name, typed parameters,
// whether it is a mutation, and its body's token range.
export function parseQueries(src) {
  const toks = significant(lex(src));
  const out = [];
  for (let i = 0; i < toks.length; i++) {
    if (toks[i].text !== 'query' || toks[i].type !== 'keyword') continue;
    const name = toks[i + 1];
    if (!name || (name.type !== 'ident' && name.type !== 'type')) continue;
    const q = { name: name.text, params: [], mutation: false, start: toks[i].start, body: [] };
    let j = i + 2;
    if (toks[j] && toks[j].text === '(') {
      const end = closeOf(toks, j);
      for (let k = j + 1; k < end; k++) {
        if (toks[k].type !== 'variable' || !toks[k + 1] || toks[k + 1].text !== ':') continue;
        const pname = toks[k].text.slice(1);
        let type = '';
        for (k += 2; k < end && toks[k].text !== ','; k++) type += toks[k].text;
        const nullable = type.endsWith('?');
        q.params.push({ name: pname, type: nullable ? type.slice(0, -1) : type, nullable });
      }
      j = end + 1;
    }
    while (toks[j] && toks[j].text !== '{') j++;
    if (!toks[j]) { out.push(q); continue; }
    const end = closeOf(toks, j);
    q.body = toks.slice(j + 1, end);
    q.end = toks[end].end;
    // A read's body starts with match; a mutation's is statements.
    q.mutation = q.body.length > 0 && ['insert', 'update', 'delete'].includes(q.body[0].text);
    out.push(q);
    i = end;
  }
  return out;
}

// matchInfo reads a read query's match block: variable bindings
// {var: Type} and traversals [{from, edge, to, edgeVar}] (variables without
// '$'). Patterns inside not { } are local and skipped.
export function matchInfo(q) {
  const info = { bindings: {}, traversals: [] };
  const b = q.body;
  const mi = b.findIndex(t => t.text === 'match');
  if (mi < 0 || !b[mi + 1] || b[mi + 1].text !== '{') return info;
  const end = closeOf(b, mi + 1);
  for (let i = mi + 2; i < end; i++) {
    const t = b[i];
    if (t.text === 'not' && b[i + 1] && b[i + 1].text === '{') { i = closeOf(b, i + 1); continue; }
    if (t.type !== 'variable') continue;
    const v = t.text.slice(1);
    const n1 = b[i + 1], n2 = b[i + 2];
    if (n1 && n1.text === ':' && n2 && n2.type === 'type') { if (!(v in info.bindings)) info.bindings[v] = n2.text; i += 2; continue; }
    // $a [$e:]edge[{m,n}] $b, or $a <edge> $b
    let k = i + 1, edgeVar = null, undirected = false;
    if (b[k] && b[k].type === 'variable' && b[k + 1] && b[k + 1].text === ':') { edgeVar = b[k].text.slice(1); k += 2; }
    if (b[k] && b[k].text === '<') { undirected = true; k++; }
    const e = b[k];
    if (!e || e.type !== 'ident') continue;
    k++;
    if (undirected && b[k] && b[k].text === '>') k++;
    if (b[k] && b[k].text === '{') k = closeOf(b, k) + 1;
    if (b[k] && b[k].type === 'variable') {
      info.traversals.push({ from: v, edge: e.text, to: b[k].text.slice(1), edgeVar, undirected });
      i = k - 1;
    }
  }
  return info;
}

// inferTypes adds the node types traversals imply ($p knows $f binds $f
// to Knows's other endpoint) to info.bindings, and returns info.
export function inferTypes(info, schema) {
  for (let changed = true; changed;) {
    changed = false;
    for (const t of info.traversals) {
      const e = schema.edges.find(e => e.name === t.edge) || schema.edges.find(e => e.name.toLowerCase() === t.edge.toLowerCase());
      if (!e) continue;
      const fb = info.bindings[t.from], tb = info.bindings[t.to];
      let want = null;
      if (fb && !tb) want = [t.to, fb === e.from ? e.to : e.from];
      else if (tb && !fb) want = [t.from, tb === e.to ? e.from : e.to];
      else if (!fb && !tb) want = [t.from, e.from];
      if (want && want[0] !== '_') { info.bindings[want[0]] = want[1]; changed = true; }
    }
  }
  return info;
}

// queryAt returns the query declaration containing offset pos (or the
// last one before it).
function queryAt(queries, pos) {
  let found = null;
  for (const q of queries) if (q.start <= pos) found = q;
  return found;
}

// complete proposes completions at offset pos of src: {from, items}, where
// items are {label, detail, kind} and from is where the replaced word
// starts. schema is parseSchema's result, stored the stored query names.
export function complete(src, pos, schema, stored) {
  const before = src.slice(0, pos);
  const word = /[$A-Za-z0-9_]*$/.exec(before)[0];
  const from = pos - word.length;
  const toks = significant(lex(before.slice(0, from)));
  const prev = toks[toks.length - 1], prev2 = toks[toks.length - 2], prev3 = toks[toks.length - 3];
  const q = queryAt(parseQueries(src), pos);
  const info = q ? inferTypes(matchInfo(q), schema) : { bindings: {}, traversals: [] };
  const nodeOf = v => schema.nodes.find(n => n.name === info.bindings[v]);
  const edgeOfVar = v => {
    const t = info.traversals.find(t => t.edgeVar === v);
    return t ? schema.edges.find(e => e.name.toLowerCase() === t.edge.toLowerCase()) : null;
  };
  const edgeItems = () => schema.edges.map(e => ({ label: e.name.charAt(0).toLowerCase() + e.name.slice(1), detail: `edge ${e.from} → ${e.to}`, kind: 'edge' }));
  const typeItems = () => schema.nodes.map(n => ({ label: n.name, detail: 'node', kind: 'type' }));
  const inParams = q && /\([^)]*$/.test(src.slice(q.start, pos)) && src.slice(q.start, pos).indexOf('{') < 0;
  let items;
  if (inParams && prev && prev.text === ':') {
    items = BASE_TYPES.map(t => ({ label: t, detail: 'parameter type', kind: 'type' }));
  } else if (prev && prev.text === '.' && prev2 && prev2.type === 'variable') {
    // $v.prop
    const v = prev2.text.slice(1);
    const decl = nodeOf(v) || edgeOfVar(v);
    items = decl ? decl.props.map(p => ({ label: p.name, detail: `${p.type} · ${decl.name}`, kind: 'property' })) : [];
  } else if (prev && prev.text === ':' && prev2 && prev2.type === 'variable') {
    // $v: Type, or $a $e:edge
    items = prev3 && prev3.type === 'variable' ? edgeItems() : typeItems();
  } else if (prev && prev.text === ':' && prev2 && prev2.type === 'ident' && q && before.lastIndexOf('{') > before.lastIndexOf('}')) {
    items = []; // a property value: nothing schema-driven to offer
  } else if (prev && prev.type === 'variable' && word[0] !== '$') {
    // after a variable in a pattern: a traversal or a filter operator
    items = [...edgeItems(), { label: 'contains', detail: 'operator', kind: 'keyword' }, { label: 'starts_with', detail: 'operator', kind: 'keyword' }];
  } else if (prev && prev.text === '{' && prev2 && prev2.type === 'type') {
    // $v: Type { prop: … }
    const decl = schema.nodes.find(n => n.name === prev2.text);
    items = decl ? decl.props.map(p => ({ label: p.name, detail: p.type, kind: 'property' })) : [];
  } else if (word[0] === '$') {
    const vars = new Set([...Object.keys(info.bindings), ...info.traversals.flatMap(t => [t.from, t.to, t.edgeVar].filter(Boolean))]);
    const params = q ? q.params.map(p => p.name) : [];
    items = [...[...vars].map(v => ({ label: '$' + v, detail: info.bindings[v] || 'variable', kind: 'variable' })),
      ...params.filter(p => !vars.has(p)).map(p => ({ label: '$' + p, detail: 'parameter', kind: 'variable' }))];
  } else if (prev && (prev.text === 'insert' || prev.text === 'update' || prev.text === 'delete')) {
    items = [...typeItems(), ...(prev.text === 'insert' || prev.text === 'delete' ? schema.edges.map(e => ({ label: e.name, detail: 'edge', kind: 'type' })) : [])];
  } else {
    items = [...KEYWORDS.map(k => ({ label: k, detail: 'keyword', kind: 'keyword' })),
      ...FUNCTIONS.map(f => ({ label: f, detail: 'function', kind: 'function' })),
      ...typeItems(), ...edgeItems(),
      ...stored.map(s => ({ label: s, detail: 'stored query: run by name', kind: 'stored' }))];
  }
  const lw = word.toLowerCase();
  const seen = new Set();
  items = items.filter(it => it.label.toLowerCase().startsWith(lw) && it.label !== word && !seen.has(it.label) && seen.add(it.label));
  return { from, items };
}
