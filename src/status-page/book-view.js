/**
 * @module status-page/book-view
 * One market's live order book in the browser, on the client SDK exactly as a trading UI would use
 * it: `connect()` to this relay's WebSocket, `subscribeBook(market, { depth: 10 })` and
 * `subscribePrice(market)`; the SDK checks seq and checksums, this view only draws its verified state.
 * The ladder is built once and updated in place; a changed size flashes green (up) or red (down).
 */
import { plural, trimDecimal } from './format.js';
import { clearRoot, closableView, connectToRelay, element, freshnessBanner, viewHead } from './view-parts.js';

const DEPTH = 10;
const PRICE_FIELDS = [
  ['best_bid', 'bid'],
  ['best_ask', 'ask'],
  ['midpoint_price', 'mid'],
  ['spread', 'spread'],
  ['last_price', 'last'],
];

export function openBookView(root, { market, title, token, transport, onClose }) {
  const client = connectToRelay({ token, transport });
  const book = client.subscribeBook(market, { depth: DEPTH });
  const price = client.subscribePrice(market);

  clearRoot(root);
  root.dataset.market = market;
  root.dataset.updates = '0';
  root.dataset.channel = 'book';
  const { head, meta, close } = viewHead(title);

  const prices = element('div', 'prices');
  const priceCells = new Map();
  for (const [field, label] of PRICE_FIELDS) {
    const cell = element('div', `price-cell ${label}`);
    const value = element('div', 'value', '–');
    cell.append(element('div', 'label', label), value);
    prices.append(cell);
    priceCells.set(field, value);
  }

  const ladder = element('table', 'ladder');
  const header = element('tr');
  for (const label of ['price', 'size', 'depth']) header.append(element('th', undefined, label));
  ladder.append(header);
  const askRows = [];
  const bidRows = [];
  for (let i = 0; i < DEPTH; i++) askRows.unshift(levelRow(ladder, 'ask'));
  const spreadRow = element('tr', 'spread');
  const spreadCell = element('td', undefined, '–');
  spreadCell.colSpan = 3;
  spreadRow.append(spreadCell);
  ladder.append(spreadRow);
  for (let i = 0; i < DEPTH; i++) bidRows.push(levelRow(ladder, 'bid'));
  const banner = freshnessBanner(root);
  root.append(head, banner.node, prices, ladder);

  let updates = 0;
  let connection = 'connecting';
  const renderMeta = () => {
    meta.textContent = `${market} · ${connection} · ${book.status} · seq ${book.seq ?? '–'} · ${plural(updates, 'update')}`;
  };

  const renderBook = (state) => {
    const asks = state.asks.slice(0, DEPTH);
    const bids = state.bids.slice(0, DEPTH);
    const deepest = Math.max(cumulative(asks).at(-1) ?? 0, cumulative(bids).at(-1) ?? 0) || 1;
    fillSide(askRows, asks, deepest);
    fillSide(bidRows, bids, deepest);
    const bestAsk = asks[0]?.[0];
    const bestBid = bids[0]?.[0];
    spreadCell.textContent =
      bestAsk === undefined || bestBid === undefined
        ? 'one-sided book'
        : `bid ${trimDecimal(bestBid)} · ask ${trimDecimal(bestAsk)} · last ${trimDecimal(state.last_price)}`;
    root.dataset.seq = String(book.seq);
    root.dataset.updates = String(updates);
    renderMeta();
  };

  const offs = [
    book.on('snapshot', ({ state }) => renderBook(state)),
    book.on('update', ({ state }) => {
      updates += 1;
      renderBook(state);
    }),
    book.on('status', ({ status, reason }) => {
      banner.show(status, reason);
      renderMeta();
    }),
    price.on('snapshot', ({ state }) => renderPrice(state)),
    price.on('update', ({ state }) => renderPrice(state)),
    client.on('status', ({ status }) => {
      connection = status;
      renderMeta();
    }),
    client.on('error', (error) => {
      meta.textContent = `${market} · error: ${error.message}`;
    }),
  ];

  function renderPrice(state) {
    for (const [field] of PRICE_FIELDS) {
      const cell = priceCells.get(field);
      const value = trimDecimal(state[field]);
      if (cell.textContent !== value) cell.textContent = value;
    }
  }

  return closableView({ root, client, close, offs, streams: [book, price], onClose });
}

function levelRow(table, side) {
  const row = element('tr', side);
  const price = element('td', 'price', '');
  const size = element('td', 'size', '');
  const depth = element('td', 'depth');
  const bar = element('div', 'bar');
  depth.append(bar);
  row.append(price, size, depth);
  table.append(row);
  return { price, size, bar, key: undefined, lastSize: undefined };
}

function fillSide(rows, levels, deepest) {
  const totals = cumulative(levels);
  rows.forEach((row, index) => {
    const level = levels[index];
    if (level === undefined) {
      row.price.textContent = '';
      row.size.textContent = '';
      row.bar.style.width = '0';
      row.key = undefined;
      return;
    }
    const [price, size] = level;
    const shownSize = trimDecimal(size);
    if (row.key === price && row.size.textContent !== shownSize) {
      // Direction of the flash only; the size shown is the exact text.
      flash(row.size, Number(size) > Number(row.lastSize) ? 'flash-up' : 'flash-down');
    }
    row.key = price;
    row.lastSize = size;
    row.price.textContent = trimDecimal(price);
    row.size.textContent = shownSize;
    row.bar.style.width = `${Math.round((totals[index] / deepest) * 100)}%`;
  });
}

/**
 * Cumulative size per level, for the depth bars only: a picture, never shown as a number, so a
 * float's rounding cannot misstate a size (sizes themselves are shown as the relay's exact text).
 */
function cumulative(levels) {
  let sum = 0;
  return levels.map(([, size]) => {
    sum += Number(size);
    return sum;
  });
}

function flash(cell, className) {
  cell.classList.remove('flash-up', 'flash-down');
  // Reading layout restarts the CSS animation when the same class is added again.
  void cell.offsetWidth;
  cell.classList.add(className);
}
