// graph.js: a small SVG graph drawing with a deterministic force layout
// (same input, same picture), used by the query results' graph view.

const SVG = 'http://www.w3.org/2000/svg';
const svgEl = (name, attrs = {}) => {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};

export class GraphView {
  // svg is the <svg> to draw into; onClick(node) is called when a node is
  // clicked (the console expands it).
  constructor(svg, onClick) {
    this.svg = svg;
    this.onClick = onClick;
    this.clear();
  }

  clear() {
    this.nodes = new Map(); // key → {key, id, type, label, props, x, y, expanded, expandable}
    this.edges = new Map(); // key → {from, to, type}
    this.typeClass = new Map();
  }

  // addNode adds a node unless one with its key exists, placing it near
  // anchor (a node key) when given; it returns the node.
  addNode(n, anchor) {
    const key = n.type + '\u0000' + n.id;
    let node = this.nodes.get(key);
    if (node) return node;
    const i = this.nodes.size;
    const a = anchor && this.nodes.get(anchor);
    // Deterministic start: a spiral around the anchor or the origin.
    const ang = i * 2.399963, r = a ? 60 : 40 * Math.sqrt(i + 1);
    node = { ...n, key, x: (a ? a.x : 0) + r * Math.cos(ang), y: (a ? a.y : 0) + r * Math.sin(ang), expanded: false };
    this.nodes.set(key, node);
    if (!this.typeClass.has(n.type)) this.typeClass.set(n.type, 'type-' + (this.typeClass.size % 8));
    return node;
  }

  addEdge(fromKey, toKey, type) {
    if (!this.nodes.has(fromKey) || !this.nodes.has(toKey)) return;
    this.edges.set(fromKey + '\u0001' + toKey + '\u0001' + type, { from: fromKey, to: toKey, type });
  }

  // layout runs a Fruchterman–Reingold simulation for a fixed number of
  // steps with a cooling temperature.
  layout(steps = 300) {
    const ns = [...this.nodes.values()];
    if (ns.length === 0) return;
    const k = 90, es = [...this.edges.values()];
    let temp = 60;
    for (let s = 0; s < steps; s++) {
      const disp = new Map(ns.map(n => [n.key, { x: 0, y: 0 }]));
      for (let i = 0; i < ns.length; i++) {
        for (let j = i + 1; j < ns.length; j++) {
          const a = ns[i], b = ns[j];
          let dx = a.x - b.x, dy = a.y - b.y;
          let d = Math.hypot(dx, dy);
          if (d < 0.01) { dx = 0.01 * (i - j); dy = 0.01; d = Math.hypot(dx, dy); }
          const f = (k * k) / d;
          const da = disp.get(a.key), db = disp.get(b.key);
          da.x += (dx / d) * f; da.y += (dy / d) * f;
          db.x -= (dx / d) * f; db.y -= (dy / d) * f;
        }
      }
      for (const e of es) {
        if (e.from === e.to) continue;
        const a = this.nodes.get(e.from), b = this.nodes.get(e.to);
        const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(Math.hypot(dx, dy), 0.01);
        const f = (d * d) / k;
        const da = disp.get(a.key), db = disp.get(b.key);
        da.x -= (dx / d) * f; da.y -= (dy / d) * f;
        db.x += (dx / d) * f; db.y += (dy / d) * f;
      }
      for (const n of ns) {
        const d = disp.get(n.key);
        d.x -= n.x * 0.02; d.y -= n.y * 0.02; // gravity keeps components together
        const len = Math.max(Math.hypot(d.x, d.y), 0.01);
        n.x += (d.x / len) * Math.min(len, temp);
        n.y += (d.y / len) * Math.min(len, temp);
      }
      temp = Math.max(2, temp * 0.985);
    }
  }

  render() {
    const svg = this.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const defs = svgEl('defs');
    const marker = svgEl('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.appendChild(svgEl('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
    defs.appendChild(marker);
    svg.appendChild(defs);
    const ns = [...this.nodes.values()];
    if (ns.length === 0) { svg.setAttribute('viewBox', '0 0 100 100'); return; }
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const n of ns) { minX = Math.min(minX, n.x); minY = Math.min(minY, n.y); maxX = Math.max(maxX, n.x); maxY = Math.max(maxY, n.y); }
    const pad = 70;
    svg.setAttribute('viewBox', `${minX - pad} ${minY - pad} ${Math.max(maxX - minX, 200) + 2 * pad} ${Math.max(maxY - minY, 150) + 2 * pad}`);
    const R = 16;
    const edgeLayer = svgEl('g', { class: 'edges' });
    for (const e of this.edges.values()) {
      const a = this.nodes.get(e.from), b = this.nodes.get(e.to);
      const g = svgEl('g', { class: 'edge' });
      if (a === b) {
        g.appendChild(svgEl('path', { d: `M ${a.x + R} ${a.y} a 18 18 0 1 1 0 -1`, class: 'edge-line' }));
      } else {
        const dx = b.x - a.x, dy = b.y - a.y, d = Math.max(Math.hypot(dx, dy), 1);
        g.appendChild(svgEl('line', { x1: a.x + (dx / d) * R, y1: a.y + (dy / d) * R, x2: b.x - (dx / d) * R, y2: b.y - (dy / d) * R,
          class: 'edge-line', 'marker-end': 'url(#arrow)' }));
      }
      const label = svgEl('text', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, class: 'edge-label' });
      label.textContent = e.type;
      g.appendChild(label);
      edgeLayer.appendChild(g);
    }
    svg.appendChild(edgeLayer);
    const nodeLayer = svgEl('g', { class: 'nodes' });
    for (const n of ns) {
      const cls = ['node', this.typeClass.get(n.type)];
      if (n.expanded) cls.push('expanded');
      if (n.expandable) cls.push('expandable');
      const g = svgEl('g', { class: cls.join(' '), transform: `translate(${n.x} ${n.y})`, 'data-key': n.key, tabindex: 0, role: 'button' });
      g.appendChild(svgEl('circle', { r: R }));
      const t = svgEl('text', { y: R + 14, class: 'node-label' });
      t.textContent = n.label;
      g.appendChild(t);
      const title = svgEl('title');
      title.textContent = `${n.type} ${n.id}` + Object.entries(n.props || {}).map(([k, v]) => `\n${k}: ${JSON.stringify(v)}`).join('') +
        (n.expandable ? (n.expanded ? '\n(expanded)' : '\nclick to expand') : '');
      g.appendChild(title);
      g.addEventListener('click', () => this.onClick(n));
      g.addEventListener('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); this.onClick(n); } });
      nodeLayer.appendChild(g);
    }
    svg.appendChild(nodeLayer);
  }
}
