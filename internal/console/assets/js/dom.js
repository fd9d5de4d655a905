// dom.js: element construction without innerHTML (text is always text).

// h builds an element: h('td', {class: 'x', onclick: f}, 'text', child…).
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// clear empties an element and appends children.
export function fill(e, ...children) {
  while (e.firstChild) e.removeChild(e.firstChild);
  for (const c of children.flat()) if (c) e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

export const $ = id => document.getElementById(id);

// cell renders a JSON value for a table cell.
export function cell(v) {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  if (typeof v === 'object') return h('code', {}, JSON.stringify(v));
  return String(v);
}

// when formats an epoch-microseconds timestamp in UTC.
export function when(us) {
  const d = new Date(Math.floor(us / 1000));
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export const short = id => (id || '').slice(0, 10);
