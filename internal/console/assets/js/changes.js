// changes.js: rendering of entity changes (commit changes, diffs, merge
// previews) and merge conflicts.
import { h, cell } from './dom.js';

// changeList renders EntityChangeOutput values: one card each with the
// properties that differ between the before and after images.
export function changeList(changes) {
  if (!changes.length) return h('p', { class: 'muted' }, 'No changes.');
  return h('ul', { class: 'changes' }, changes.map(ch => {
    const before = (ch.before && ch.before.properties) || {}, after = (ch.after && ch.after.properties) || {};
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    const ends = (ch.after || ch.before || {}).endpoints;
    const rows = keys.map(k => {
      const b = JSON.stringify(before[k]), a = JSON.stringify(after[k]);
      const changed = ch.op === 'update' ? b !== a : true;
      return h('tr', { class: changed ? 'changed' : '' }, h('th', {}, k),
        h('td', { class: 'before' }, ch.before ? cell(before[k]) : ''), h('td', { class: 'after' }, ch.after ? cell(after[k]) : ''));
    });
    return h('li', { class: 'change op-' + ch.op },
      h('div', { class: 'change-head' }, h('span', { class: 'badge op-' + ch.op }, ch.op), ' ',
        h('span', { class: 'muted' }, ch.kind), ' ', h('strong', {}, ch.type.name), ' ', h('code', {}, ch.id),
        ends ? h('span', { class: 'muted' }, ` ${ends.from} → ${ends.to}`) : null),
      rows.length ? h('table', { class: 'props' }, h('thead', {}, h('tr', {}, h('th', {}, 'property'), h('th', {}, 'before'), h('th', {}, 'after'))), h('tbody', {}, rows)) : null);
  }));
}

// conflictTable renders merge conflicts (MergeConflictOutput values).
export function conflictTable(conflicts) {
  return h('table', { class: 'grid conflicts' },
    h('thead', {}, h('tr', {}, ['kind', 'entity', 'type', 'id', 'message'].map(c => h('th', {}, c)))),
    h('tbody', {}, conflicts.map(c => h('tr', {}, h('td', {}, h('span', { class: 'badge conflict' }, c.kind)), h('td', {}, c.entity_kind),
      h('td', {}, c.type_name), h('td', {}, h('code', {}, c.entity_id || '')), h('td', {}, c.message)))));
}
