// editor.js: the query editor, a textarea over a highlighted copy of its
// text, with schema completion (Ctrl+Space, or as you type a word or '.').
import { highlight, complete } from './gq.js';
import { h, fill } from './dom.js';

export class Editor {
  // onChange() runs after every edit; onRun() on Ctrl+Enter; onStored(name)
  // when a stored query is picked from the completions.
  constructor(root, { onChange, onRun, onStored }) {
    this.ta = root.querySelector('textarea');
    this.pre = root.querySelector('pre');
    this.list = root.querySelector('ul');
    this.schema = { nodes: [], edges: [] };
    this.stored = [];
    this.items = [];
    this.sel = 0;
    this.from = 0;
    this.onChange = onChange;
    this.onStored = onStored;
    this.ta.addEventListener('input', ev => {
      this.paint();
      this.onChange();
      const typed = ev.data || '';
      if (/^[A-Za-z0-9_.$]$/.test(typed)) this.suggest(false);
      else this.close();
    });
    this.ta.addEventListener('scroll', () => { this.pre.scrollTop = this.ta.scrollTop; this.pre.scrollLeft = this.ta.scrollLeft; });
    this.ta.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    this.ta.addEventListener('keydown', ev => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); this.close(); onRun(); return; }
      if (ev.key === ' ' && ev.ctrlKey) { ev.preventDefault(); this.suggest(true); return; }
      if (this.list.hidden) return;
      if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
        ev.preventDefault();
        this.sel = (this.sel + (ev.key === 'ArrowDown' ? 1 : this.items.length - 1)) % this.items.length;
        this.drawList();
      } else if (ev.key === 'Enter' || ev.key === 'Tab') {
        ev.preventDefault();
        this.accept(this.sel);
      } else if (ev.key === 'Escape') {
        ev.preventDefault();
        this.close();
      }
    });
    this.paint();
  }

  get value() { return this.ta.value; }
  set value(v) { this.ta.value = v; this.paint(); this.onChange(); }

  paint() {
    // The highlighted copy is built from escaped tokens only (gq.highlight).
    this.pre.innerHTML = highlight(this.ta.value);
  }

  // suggest opens the completion list at the caret; explicit opens it even
  // for an empty word.
  suggest(explicit) {
    const pos = this.ta.selectionStart;
    const { from, items } = complete(this.ta.value, pos, this.schema, this.stored);
    if (!items.length || (!explicit && from === pos && !/[.:\s]$/.test(this.ta.value.slice(0, pos)))) { this.close(); return; }
    this.items = items.slice(0, 50);
    this.from = from;
    this.sel = 0;
    this.place(pos);
    this.drawList();
  }

  // place positions the list under the caret, measured in character cells
  // of the editor's monospace font.
  place(pos) {
    const before = this.ta.value.slice(0, pos);
    const line = before.split('\n').length - 1;
    const col = pos - before.lastIndexOf('\n') - 1;
    const cs = getComputedStyle(this.ta);
    const lh = parseFloat(cs.lineHeight) || 20;
    const probe = h('span', { class: 'probe' }, 'M'.repeat(10));
    this.pre.parentNode.appendChild(probe);
    const cw = probe.getBoundingClientRect().width / 10 || 8;
    probe.remove();
    this.list.style.left = `${parseFloat(cs.paddingLeft) + col * cw - this.ta.scrollLeft}px`;
    this.list.style.top = `${parseFloat(cs.paddingTop) + (line + 1) * lh - this.ta.scrollTop}px`;
  }

  drawList() {
    fill(this.list, this.items.map((it, i) => h('li', {
      class: (i === this.sel ? 'sel ' : '') + 'kind-' + it.kind, role: 'option',
      onmousedown: ev => { ev.preventDefault(); this.accept(i); },
    }, h('span', { class: 'label' }, it.label), h('span', { class: 'detail' }, it.detail))));
    this.list.hidden = false;
    const s = this.list.children[this.sel];
    if (s) s.scrollIntoView({ block: 'nearest' });
  }

  accept(i) {
    const it = this.items[i];
    this.close();
    if (!it) return;
    if (it.kind === 'stored') {
      // A stored query runs by name; its source stays on the server.
      const v = this.ta.value;
      this.ta.value = v.slice(0, this.from) + v.slice(this.ta.selectionStart);
      this.paint();
      this.onStored(it.label);
      return;
    }
    const v = this.ta.value, end = this.ta.selectionStart;
    this.ta.value = v.slice(0, this.from) + it.label + v.slice(end);
    const caret = this.from + it.label.length;
    this.ta.setSelectionRange(caret, caret);
    this.paint();
    this.onChange();
    this.ta.focus();
  }

  close() { this.list.hidden = true; this.items = []; }
}
