/**
 * @module status-page/view-parts
 * What the status page's live views (book-view.js, channel-view.js) share: their SDK client, the
 * head every view starts with (market title, a meta line, a close button), its closing, and DOM
 * pieces.
 */
import { connect } from '/assets/client.js';

/** A client of this relay, with the page's API key and transport (docs/client.md). */
export function connectToRelay({ token, transport }) {
  return connect(location.origin, {
    ...(token === undefined ? {} : { apiKey: token }),
    ...(transport === undefined ? {} : { transport }),
  });
}

/** Empties the view's root: its children and every data attribute a view set on it. */
export function clearRoot(root) {
  root.replaceChildren();
  for (const key of Object.keys(root.dataset)) delete root.dataset[key];
}

/**
 * The view object: `close()` (also on the close button) drops the listeners, unsubscribes the
 * streams, closes the client and empties the root.
 */
export function closableView({ root, client, close, offs, streams, onClose }) {
  const view = {
    close() {
      for (const off of offs) off();
      for (const stream of streams) stream.unsubscribe();
      void client.close();
      clearRoot(root);
      onClose();
    },
  };
  close.addEventListener('click', () => view.close());
  return view;
}

export function element(tag, className, content) {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

/** The view's head; `meta` is the line a view keeps current (stream, connection, seq, updates). */
export function viewHead(title) {
  const head = element('div', 'book-head');
  const heading = element('div');
  const meta = element('div', 'book-meta', 'connecting…');
  heading.append(element('div', 'book-title', title), meta);
  const close = element('button', 'close-book', 'close');
  close.type = 'button';
  head.append(heading, close);
  return { head, meta, close };
}

/**
 * The banner a view shows while its stream is not live, so that a stale or closed stream cannot pass
 * for a live one: it says which, why and since when, and marks the view's root (`is-stale`,
 * `is-closed`), which greys what the view shows and stops its flashes (book.css).
 */
export function freshnessBanner(root) {
  const node = element('div', 'stream-banner');
  node.hidden = true;
  node.setAttribute('role', 'status');
  let shown;
  let since;
  const show = (status, reason) => {
    const stale = status === 'stale';
    const closed = status === 'closed';
    root.classList.toggle('is-stale', stale);
    root.classList.toggle('is-closed', closed);
    root.dataset.status = status;
    if (!stale && !closed) {
      node.hidden = true;
      shown = undefined;
      return;
    }
    if (shown !== status) {
      shown = status;
      since = new Date().toISOString().slice(11, 19);
    }
    const why = reason ?? (stale ? 'no upstream answer' : 'the stream ended');
    node.textContent = stale
      ? `Stale since ${since} UTC: ${why}. Showing the last known state, which may be out of date.`
      : `Closed since ${since} UTC: ${why}. This stream has ended; nothing more will arrive.`;
    node.hidden = false;
  };
  return { node, show };
}

/** A table with a header row; returns the table and its body to fill. */
export function table(className, labels) {
  const node = element('table', className);
  const header = element('tr');
  for (const label of labels) header.append(element('th', undefined, label));
  const body = element('tbody');
  node.append(element('thead'), body);
  node.tHead.append(header);
  return { node, body };
}

/** Replaces a table body's rows with one row per entry of `rows` (arrays of cell texts). */
export function fillRows(body, rows, rowClass) {
  body.replaceChildren(
    ...rows.map((cells) => {
      const row = element('tr', rowClass);
      for (const cell of cells) row.append(element('td', undefined, cell));
      return row;
    }),
  );
}

/**
 * A table body kept in place, as the book's ladder is: `fill(rows)` takes `{ key, cells, data? }`
 * entries in display order and matches them to the rows drawn by key, so that a changed cell (and
 * each cell of a new row) flashes while the rest stay put; nothing flashes on the first fill.
 * `data` sets the row's data attributes; clicking a row calls `onPick(key, data)`. Columns in
 * `quiet` never flash: their text changes with the clock, not with the data (`expires in 3m`).
 */
export function keyedRows(body, { onPick, quiet = [] } = {}) {
  let rows = new Map();
  let filled = false;
  if (onPick !== undefined) {
    body.classList.add('pickable');
    body.addEventListener('click', (event) => {
      const row = event.target.closest('tr[data-key]');
      if (row !== null) onPick(row.dataset.key, { ...row.dataset });
    });
  }
  return (entries) => {
    const kept = new Map();
    const ordered = entries.map(({ key, cells, data = {} }, index) => {
      // Two entries under one key still get a row each.
      const unique = kept.has(key) ? `${key}#${index}` : key;
      const row = rows.get(unique) ?? element('tr');
      row.dataset.key = key;
      for (const [name, value] of Object.entries(data)) row.dataset[name] = value;
      cells.forEach((value, column) => {
        const cell = row.children[column] ?? row.appendChild(element('td'));
        if (cell.textContent === value) return;
        cell.textContent = value;
        if (filled && !quiet.includes(column)) flashChanged(cell);
      });
      kept.set(unique, row);
      return row;
    });
    // Moving a row restarts its animations: the rows are only put back when their order changed.
    const current = [...body.children];
    if (current.length !== ordered.length || ordered.some((row, index) => current[index] !== row))
      body.replaceChildren(...ordered);
    rows = kept;
    filled = true;
  };
}

function flashChanged(cell) {
  cell.classList.remove('flash-changed');
  // Reading layout restarts the animation when the class comes back at once.
  void cell.offsetWidth;
  cell.classList.add('flash-changed');
  cell.addEventListener('animationend', () => cell.classList.remove('flash-changed'), { once: true });
}
