// pg.js: a tolerant reader of .pg schema source for display and
// completion. It extracts declarations only (nodes, edges, interfaces,
// properties and their annotations); the server's compiler is the
// authority on validity, and the console only ever reads accepted schemas.

// tokenize splits .pg source into words, strings, numbers and punctuation,
// dropping whitespace and comments.
function tokenize(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (src.startsWith('//', i)) { const j = src.indexOf('\n', i); i = j < 0 ? src.length : j; continue; }
    if (src.startsWith('/*', i)) { const j = src.indexOf('*/', i + 2); i = j < 0 ? src.length : j + 2; continue; }
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out.push({ t: 'str', v: src.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    if (src.startsWith('->', i) || src.startsWith('..', i)) { out.push({ t: 'p', v: src.slice(i, i + 2) }); i += 2; continue; }
    const m = /^[A-Za-z_][A-Za-z0-9_]*|^-?[0-9]+(\.[0-9]+)?/.exec(src.slice(i, i + 200));
    if (m) { out.push({ t: /^[A-Za-z_]/.test(m[0]) ? 'w' : 'num', v: m[0] }); i += m[0].length; continue; }
    out.push({ t: 'p', v: c });
    i++;
  }
  return out;
}

// parseSchema returns {nodes, edges, interfaces}; each node and edge has
// props [{name, type, annotations: [string]}], nodes a key (or null).
export function parseSchema(src) {
  const toks = tokenize(src);
  let i = 0;
  const peek = () => toks[i] || { t: 'eof', v: '' };
  const next = () => toks[i++] || { t: 'eof', v: '' };
  // skipGroup skips a balanced (...) starting at the current '('.
  const skipGroup = () => {
    let depth = 0;
    do {
      const t = next();
      if (t.v === '(') depth++;
      else if (t.v === ')') depth--;
      if (t.t === 'eof') return;
    } while (depth > 0);
  };
  // A body constraint (@range, @check, or @key/@unique/@index with
  // arguments) ends a property's annotations.
  const isConstraint = () => peek().v === '@' && (/^(range|check)$/.test((toks[i + 1] || {}).v) ||
    (/^(key|unique|index)$/.test((toks[i + 1] || {}).v) && (toks[i + 2] || {}).v === '('));
  const annotations = (inProp) => {
    const out = [];
    while (peek().v === '@' && !(inProp && isConstraint())) {
      next();
      let a = '@' + next().v;
      if (peek().v === '(') {
        const start = i;
        skipGroup();
        a += toks.slice(start, i).map(t => t.v).join('').replace(/,/g, ', ');
      }
      out.push(a);
    }
    return out;
  };
  const type = () => {
    let s = '';
    if (peek().v === '[') { next(); s = '[' + type() + ']'; if (peek().v === ']') next(); }
    else {
      s = next().v;
      if (peek().v === '(') { const start = i; skipGroup(); s += toks.slice(start, i).map(t => t.v).join('').replace(/,/g, ', '); }
    }
    if (peek().v === '?') { next(); s += '?'; }
    return s;
  };
  const body = () => {
    const props = [], keyed = [];
    if (peek().v !== '{') return props;
    next();
    while (peek().t !== 'eof' && peek().v !== '}') {
      if (peek().v === '@') {
        // Body constraints; @key(p) marks p as the key.
        for (const a of annotations(false)) {
          const m = /^@key\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(a);
          if (m) keyed.push(m[1]);
        }
        continue;
      }
      const name = next();
      if (name.t !== 'w' || peek().v !== ':') continue;
      next();
      props.push({ name: name.v, type: type(), annotations: annotations(true) });
    }
    next();
    for (const p of props) {
      if (keyed.includes(p.name) && !p.annotations.includes('@key')) p.annotations.unshift('@key');
    }
    return props;
  };
  const interfaces = {}, nodes = [], edges = [];
  while (peek().t !== 'eof') {
    const kw = next();
    if (kw.v === 'interface') {
      const name = next().v;
      interfaces[name] = body();
    } else if (kw.v === 'node') {
      const name = next().v;
      const ann = annotations();
      const impl = [];
      if (peek().v === 'implements') {
        next();
        impl.push(next().v);
        while (peek().v === ',') { next(); impl.push(next().v); }
      }
      const props = body();
      for (const iface of impl) {
        for (const p of interfaces[iface] || []) {
          if (!props.some(q => q.name === p.name)) props.push(p);
        }
      }
      nodes.push({ name, annotations: ann, implements: impl, props });
    } else if (kw.v === 'edge') {
      const name = next().v;
      if (peek().v === ':') next();
      const from = next().v;
      if (peek().v === '->') next();
      const to = next().v;
      const ann = annotations();
      edges.push({ name, from, to, annotations: ann, props: body() });
    }
  }
  for (const n of nodes) {
    const k = n.props.find(p => p.annotations.includes('@key'));
    n.key = k ? k.name : null;
  }
  return { nodes, edges, interfaces: Object.keys(interfaces).sort() };
}

// edgeWord is how a query names an edge: its name with a lower-case first
// letter (edge names match case-insensitively, exact first).
export function edgeWord(name) {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

// findEdge resolves a traversal word to an edge declaration.
export function findEdge(schema, word) {
  return schema.edges.find(e => e.name === word) || schema.edges.find(e => e.name.toLowerCase() === word.toLowerCase()) || null;
}
