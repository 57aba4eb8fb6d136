/**
 * @module status-page/rest-section
 * One `rest` stream drawn as a titled table (docs/client.md "Any public path"): the SDK keeps the
 * state, upstream's body exactly as served, by applying the relay's JSON Patches and checking each
 * checksum; the section draws each state as rows (changed cells flash), with a meta line (the
 * canonical path, status, seq, updates and the last patch's size) and a freshness banner of its
 * own. The section's `data-path`, `data-seq`, `data-updates` and `data-rows` say what it shows.
 */
import { plural } from './format.js';
import { element, freshnessBanner, keyedRows, table } from './view-parts.js';

/** Rows drawn per section: the page shows a glance, the SDK keeps the whole body. */
export const SHOWN = 15;

/**
 * `rows(body)` turns a body into `{ key, cells, data? }` entries (view-parts.js `keyedRows`),
 * `summary(body, count)` the line above the table; `onState(body)` sees each state too. Returns the
 * section's node and `close()`, which unsubscribes.
 */
export function restSection(client, { name, title, path, labels, rows, summary, onPick, onState }) {
  const node = element('section', 'rest-section');
  node.dataset.section = name;
  const meta = element('div', 'book-meta', 'subscribing…');
  const banner = freshnessBanner(node);
  const line = element('div', 'channel-summary');
  const content = element('div', 'channel-body');
  const list = table('channel-table', labels);
  content.append(line, list.node);
  node.append(element('h3', undefined, title), meta, banner.node, content);

  let stream;
  try {
    stream = client.subscribeRest(path);
  } catch (error) {
    // A path the relay would refuse (a name it cannot spell into one): said here, nothing sent.
    meta.textContent = `${path}: ${error.message}`;
    return { node, close() {} };
  }
  node.dataset.path = stream.path;
  const fill = keyedRows(list.body, { onPick });
  let updates = 0;
  let lastPatch = '';
  const renderMeta = () => {
    meta.textContent = `${stream.path} · ${stream.status} · seq ${stream.seq ?? '–'} · ${plural(updates, 'update')}${lastPatch}`;
  };
  const draw = (state) => {
    const entries = rows(state);
    fill(entries.slice(0, SHOWN));
    line.textContent = summary?.(state, entries.length) ?? '';
    node.dataset.seq = String(stream.seq);
    node.dataset.updates = String(updates);
    node.dataset.rows = String(Math.min(entries.length, SHOWN));
    renderMeta();
    onState?.(state);
  };
  const offs = [
    stream.on('snapshot', ({ state }) => draw(state)),
    stream.on('update', ({ state, message }) => {
      updates += 1;
      const operations = Array.isArray(message.data) ? message.data.length : 0;
      lastPatch = ` · last patch ${plural(operations, 'operation')}`;
      draw(state);
    }),
    stream.on('status', ({ status, reason }) => {
      banner.show(status, reason);
      renderMeta();
    }),
  ];
  return {
    node,
    close() {
      for (const off of offs) off();
      stream.unsubscribe();
    },
  };
}

/** A body's field that should be a list, as a list (empty when upstream served something else). */
export function listOf(value) {
  return Array.isArray(value) ? value.filter((entry) => typeof entry === 'object' && entry !== null) : [];
}
