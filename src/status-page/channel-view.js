/**
 * @module status-page/channel-view
 * One market's stream of a channel beyond the book, in the browser, on the client SDK as an
 * application would use it (docs/client.md): the market record, the trades tape, every market's
 * probabilities (the picked one first), the market's oracle feed (found through the record's
 * `oracle_feed_id`), the orders by id and the minute candles of the probability. The SDK checks
 * seq and epochs; this view only draws the state it keeps. The root's `data-channel`, `data-seq` and `data-updates` say what is shown.
 */
import { plural, trimDecimal } from './format.js';
import {
  clearRoot,
  closableView,
  connectToRelay,
  element,
  fillRows,
  freshnessBanner,
  table,
  viewHead,
} from './view-parts.js';

/** Rows drawn per list: the page shows a glance, the SDK keeps everything. */
const SHOWN = 15;

/** Each channel: opens its streams and draws them into `body`. */
const CHANNELS = {
  trades: openTrades,
  market: openMarket,
  probabilities: openProbabilities,
  oracle: openOracle,
  orders: openOrders,
  candles: openCandles,
};

export function openChannelView(root, { channel, market, title, token, transport, onClose }) {
  const client = connectToRelay({ token, transport });
  clearRoot(root);
  root.dataset.market = market;
  root.dataset.channel = channel;
  root.dataset.updates = '0';
  const { head, meta, close } = viewHead(title);
  const body = element('div', 'channel-body');
  const banner = freshnessBanner(root);
  root.append(head, banner.node, body);

  let connection = 'connecting';
  let updates = 0;
  let shown;
  const renderMeta = () => {
    // The stream's own id: the market, the feed id on `oracle`, `all` on `probabilities`.
    const stream = shown === undefined ? channel : `${shown.channel} ${shown.market}`;
    meta.textContent = `${stream} · ${connection} · ${shown?.status ?? 'pending'} · seq ${shown?.seq ?? '–'} · ${plural(updates, 'update')}`;
  };
  /** Called by a channel's drawing code each time its stream's state changed. */
  const drawn = (stream, isUpdate) => {
    shown = stream;
    if (isUpdate) updates += 1;
    root.dataset.seq = String(stream.seq);
    root.dataset.updates = String(updates);
    renderMeta();
  };
  const streams = [];
  const offs = [
    client.on('status', ({ status }) => {
      connection = status;
      renderMeta();
    }),
    client.on('error', (error) => {
      meta.textContent = `${channel} · error: ${error.message}`;
    }),
  ];
  /** Subscribes through `subscribe`, redrawing with `draw(state, stream)` on every verified state. */
  const follow = (stream, draw) => {
    streams.push(stream);
    offs.push(
      stream.on('snapshot', ({ state }) => {
        draw(state, stream);
        drawn(stream, false);
      }),
      stream.on('update', ({ state }) => {
        draw(state, stream);
        drawn(stream, true);
      }),
      stream.on('status', ({ status, reason }) => {
        banner.show(status, reason);
        renderMeta();
      }),
    );
    return stream;
  };
  CHANNELS[channel]({ client, market, body, follow });
  return closableView({ root, client, close, offs, streams, onClose });
}

// --- Channels -------------------------------------------------------------------------------------

/** The tape: newest first, a new print flashes; `trade` fires once per print, so the count is exact. */
function openTrades({ client, market, body, follow }) {
  const summary = element('div', 'channel-summary', 'no trades yet');
  const tape = table('channel-table trades', ['time', 'price', 'size', 'value']);
  body.append(summary, tape.node);
  let printed = 0;
  const trades = follow(client.subscribeTrades(market), (state) => {
    fillRows(
      tape.body,
      [...state]
        .reverse()
        .slice(0, SHOWN)
        .map((trade) => [
          trade.activity_timestamp.slice(11, 23),
          trimDecimal(trade.price),
          trade.size,
          trade.total_value,
        ]),
    );
    body.dataset.rows = String(Math.min(state.length, SHOWN));
  });
  trades.on('trade', () => {
    printed += 1;
    summary.textContent = `${plural(printed, 'trade')} seen · the ${SHOWN} most recent:`;
  });
}

/** The record as key/value rows; leaving ACTIVE shows a banner (the relay then closes the stream). */
function openMarket({ client, market, body, follow }) {
  const banner = element('div', 'channel-summary', '');
  const record = table('channel-table record', ['field', 'value']);
  body.append(banner, record.node);
  const stream = follow(client.subscribeMarket(market), (state) => {
    fillRows(
      record.body,
      Object.entries(state).map(([field, value]) => [
        field,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    );
    body.dataset.rows = String(Object.keys(state).length);
  });
  stream.on('closed', ({ status }) => {
    banner.textContent = `market ${status.toLowerCase()}: the relay closes this stream`;
    banner.classList.add('closed');
  });
}

/** The one stream of every market: the picked market's entry, then the others by midpoint. */
function openProbabilities({ client, market, body, follow }) {
  const picked = element('div', 'channel-summary', 'no entry for this market yet');
  const list = table('channel-table probabilities', ['market', 'midpoint', 'bid', 'ask', 'last']);
  body.append(picked, list.node);
  const row = (id, entry) => [
    id.slice(0, 8),
    ...[entry.midpoint, entry.best_bid, entry.best_ask, entry.last_trade_price].map(String),
  ];
  follow(client.subscribeProbabilities(), (state) => {
    const own = state[market];
    picked.textContent =
      own === undefined
        ? `no entry for this market (${Object.keys(state).length} markets)`
        : `this market: midpoint ${own.midpoint} · bid ${own.best_bid} · ask ${own.best_ask} · last ${own.last_trade_price} (${Object.keys(state).length} markets)`;
    const others = Object.entries(state)
      .sort(([, a], [, b]) => b.midpoint - a.midpoint)
      .slice(0, SHOWN);
    fillRows(
      list.body,
      others.map(([id, entry]) => row(id, entry)),
    );
    body.dataset.rows = String(others.length);
  });
}

/** The market's oracle feed: its id comes from the market record, then the feed is followed. */
function openOracle({ client, market, body, follow }) {
  const summary = element('div', 'channel-summary', 'reading the market record for its oracle feed…');
  const record = table('channel-table record', ['field', 'value']);
  body.append(summary, record.node);
  const marketStream = client.subscribeMarket(market);
  const off = marketStream.on('snapshot', ({ state }) => {
    off();
    const feedId = state.oracle_feed_id;
    marketStream.unsubscribe();
    if (typeof feedId !== 'string') {
      summary.textContent = 'this market names no oracle feed';
      return;
    }
    summary.textContent = `oracle feed ${feedId}`;
    follow(client.subscribeOracle(feedId), (state) => {
      fillRows(record.body, [
        ['price', String(state.price)],
        ['raw_price', state.raw_price],
        ['expo', String(state.expo)],
        ['published', new Date(state.publish_time * 1000).toISOString()],
      ]);
      body.dataset.rows = '4';
    });
  });
}

/** Orders by id, each side in the order the stream keeps (upserts in place, new ones appended). */
function openOrders({ client, market, body, follow }) {
  const summary = element('div', 'channel-summary', '');
  const sides = element('div', 'order-sides');
  const bids = table('channel-table orders bid', ['bid id', 'price', 'size']);
  const asks = table('channel-table orders ask', ['ask id', 'price', 'size']);
  sides.append(bids.node, asks.node);
  body.append(summary, sides);
  const rows = (orders) =>
    [...orders.values()].slice(0, SHOWN).map((order) => [order.id, trimDecimal(order.price), order.size]);
  follow(client.subscribeOrders(market), (state) => {
    summary.textContent = `${state.bids.size} bids · ${state.asks.size} asks (first ${SHOWN} of each side)`;
    fillRows(bids.body, rows(state.bids), 'bid');
    fillRows(asks.body, rows(state.asks), 'ask');
    body.dataset.rows = String(Math.min(state.bids.size, SHOWN) + Math.min(state.asks.size, SHOWN));
  });
}

/** Minute candles of the probability, newest first; the open one is marked, a closed one is final. */
function openCandles({ client, market, body, follow }) {
  const summary = element('div', 'channel-summary', 'no candles yet');
  const list = table('channel-table candles', ['minute', 'open', 'high', 'low', 'close', '']);
  body.append(summary, list.node);
  follow(client.subscribeCandles(market, { interval: '1m', source: 'probability' }), (state) => {
    summary.textContent = `${plural(state.length, 'candle')} of the probability, one minute each · the ${SHOWN} most recent:`;
    fillRows(
      list.body,
      [...state]
        .reverse()
        .slice(0, SHOWN)
        .map((candle) => [
          candle.start.slice(11, 16),
          ...[candle.open, candle.high, candle.low, candle.close].map(String),
          candle.final ? 'final' : 'open',
        ]),
    );
    body.dataset.rows = String(Math.min(state.length, SHOWN));
  });
}
