/**
 * @module status-page/catalogue-view
 * Upstream's market catalogue, live, on the client SDK (docs/client.md "The market catalogue"):
 * every market's list-form record from the `markets` channel, narrowed here by status and title,
 * above a log of the markets listed, expired, resolved or gone while the view is open. The view
 * holds the one `all` stream and filters it itself rather than a stream per filter: a market
 * leaving the `active` stream would only say that it left, not that it expired or resolved.
 * Clicking a market opens it in the market tabs. The root's `data-seq` and `data-updates`, each
 * row's `data-key` (the market id) and `data-status`, and each log entry's `data-kind` say what is
 * shown.
 */
import { fieldText, formatExpiry, plural } from './format.js';
import {
  clearRoot,
  closableView,
  connectToRelay,
  element,
  freshnessBanner,
  keyedRows,
  table,
  viewHead,
} from './view-parts.js';

/** Rows drawn at most: the page shows a glance, narrowed by the filters; the SDK keeps them all. */
const SHOWN = 50;
/** Entries of the change log kept. */
const LOGGED = 8;
const STATUSES = ['all', 'active', 'expired', 'resolved'];
const COLUMNS = ['market', 'status', 'expiry', 'probability', 'volume'];
const EXPIRY_COLUMN = COLUMNS.indexOf('expiry');

export function openCatalogueView(root, { token, transport, onClose, openMarket }) {
  const client = connectToRelay({ token, transport });
  const catalogue = client.subscribeMarkets();
  clearRoot(root);
  root.dataset.channel = 'markets';
  root.dataset.updates = '0';
  const { head, meta, close } = viewHead('Market catalogue');
  const banner = freshnessBanner(root);
  const body = element('div', 'channel-body catalogue');

  const search = element('input', 'view-search');
  search.type = 'search';
  search.placeholder = 'Search by title…';
  search.autocomplete = 'off';
  const status = element('select', 'catalogue-status');
  status.setAttribute('aria-label', 'Market status');
  for (const name of STATUSES) status.append(new Option(name, name));
  const filters = element('div', 'picker-filters');
  filters.append(search, status);
  const counts = element('div', 'channel-summary', 'waiting for the catalogue…');
  const log = element('ul', 'change-log');
  const list = table('channel-table catalogue-table', COLUMNS);
  const scroller = element('div', 'table-scroll');
  scroller.append(list.node);
  body.append(filters, counts, log, scroller);
  root.append(head, banner.node, body);

  /** Market id → list-form record, as the SDK keeps it. */
  let state = {};
  /** Markets listed while the view is open, newest first: drawn above the others. */
  const listed = [];
  let updates = 0;
  let connection = 'connecting';
  const fill = keyedRows(list.body, {
    onPick: (id) => openMarket(id, titleOf(state[id], id)),
    quiet: [EXPIRY_COLUMN],
  });

  const renderMeta = () => {
    meta.textContent = `markets ${catalogue.market} · ${connection} · ${catalogue.status} · seq ${catalogue.seq ?? '–'} · ${plural(updates, 'update')}`;
  };

  const render = () => {
    const wanted = status.value.toUpperCase();
    const needle = search.value.trim().toLowerCase();
    const fresh = new Set(listed);
    const ordered = [
      ...listed.filter((id) => Object.hasOwn(state, id)).map((id) => [id, state[id]]),
      ...Object.entries(state).filter(([id]) => !fresh.has(id)),
    ];
    const shown = ordered.filter(
      ([id, record]) =>
        (wanted === 'ALL' || String(record.status).toUpperCase() === wanted) &&
        (needle === '' || titleOf(record, id).toLowerCase().includes(needle)),
    );
    const now = Date.now();
    fill(
      shown.slice(0, SHOWN).map(([id, record]) => ({
        key: id,
        data: { status: String(record.status), fresh: String(fresh.has(id)) },
        cells: [
          titleOf(record, id),
          fieldText(record.status),
          formatExpiry(String(record.status), Date.parse(record.expiration_timestamp), now),
          fieldText(record.probability),
          fieldText(record.volume),
        ],
      })),
    );
    const byStatus = new Map();
    for (const record of Object.values(state))
      byStatus.set(record.status, (byStatus.get(record.status) ?? 0) + 1);
    const tally = [...byStatus].map(([name, count]) => `${count} ${String(name).toLowerCase()}`).join(' · ');
    const drawn =
      shown.length > SHOWN ? `the first ${SHOWN} of ${shown.length} shown` : `${shown.length} shown`;
    counts.textContent = `${plural(ordered.length, 'market')}: ${tally || 'none'} · ${drawn}`;
    body.dataset.rows = String(Math.min(shown.length, SHOWN));
  };

  const logChange = (kind, id, record) => {
    const entry = element(
      'li',
      kind,
      `${new Date().toISOString().slice(11, 19)} ${kind} · ${titleOf(record, id)}`,
    );
    entry.dataset.kind = kind;
    entry.dataset.key = id;
    log.prepend(entry);
    while (log.children.length > LOGGED) log.lastChild.remove();
  };

  /** What an update changed, from the state before it and its records (null: the market left). */
  const logUpdate = (before, records) => {
    for (const [id, record] of Object.entries(records)) {
      if (record === null) {
        if (Object.hasOwn(before, id)) logChange('delisted', id, before[id]);
      } else if (!Object.hasOwn(before, id)) {
        listed.unshift(id);
        listed.length = Math.min(listed.length, SHOWN);
        logChange('listed', id, record);
      } else if (before[id].status !== record.status) {
        logChange(String(record.status).toLowerCase(), id, record);
      }
    }
  };

  const drawn = (next) => {
    state = next;
    render();
    root.dataset.seq = String(catalogue.seq);
    root.dataset.updates = String(updates);
    renderMeta();
  };

  const offs = [
    catalogue.on('snapshot', ({ state: next }) => drawn(next)),
    catalogue.on('update', ({ state: next, message }) => {
      logUpdate(state, message.data);
      updates += 1;
      drawn(next);
    }),
    catalogue.on('status', ({ status: streamStatus, reason }) => {
      banner.show(streamStatus, reason);
      renderMeta();
    }),
    client.on('status', ({ status: clientStatus }) => {
      connection = clientStatus;
      renderMeta();
    }),
    client.on('error', (error) => {
      meta.textContent = `markets · error: ${error.message}`;
    }),
  ];
  search.addEventListener('input', render);
  status.addEventListener('change', render);
  return closableView({ root, client, close, offs, streams: [catalogue], onClose });
}

function titleOf(record, id) {
  return typeof record?.title === 'string' ? record.title : id;
}
