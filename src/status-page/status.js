/**
 * @module status-page/status
 * The status page's script (browser ES module, served as is): renders each snapshot of the relay's
 * SSE feed (`GET /status/events`), lists upstream markets for the picker (`GET /status/markets`),
 * and opens a market picked in either list in the live view and its tabs (live-view.js).
 */
import { formatAge, formatBytes, formatDuration, formatExpiry, sparkline, text } from './format.js';
import { openMarket, selectedMarket } from './live-view.js';

const $ = (id) => document.getElementById(id);
/** A market UUID (docs/protocol.md "Market ids"), as opposed to an oracle feed id or `all`. */
const MARKET_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// --- Live status (SSE) ----------------------------------------------------------------------------

const feed = new EventSource('/status/events');
feed.addEventListener('status', (event) => render(JSON.parse(event.data)));
feed.addEventListener('open', () => text($('feed-state'), 'live feed'));
feed.addEventListener('error', () => text($('feed-state'), 'feed lost, reconnecting…'));

const STATUS_CLASS = {
  ok: 'ok',
  upstream_unreachable: 'bad',
  upstream_misconfigured: 'bad',
  shutting_down: 'warn',
};

function render(snapshot) {
  const { health, upstream, activity, streams } = snapshot;
  text($('version'), `v${health.version}`);
  const status = $('relay-status');
  text(status, health.status.replace('_', ' '));
  status.className = `pill ${STATUS_CLASS[health.status] ?? ''}`;
  text($('uptime'), formatDuration(health.uptimeSeconds * 1000));

  const now = Date.parse(snapshot.now);
  const reachable = $('upstream-status');
  text(reachable, health.upstream.reachable ? 'reachable' : 'unreachable');
  reachable.className = `pill ${health.upstream.reachable ? 'ok' : 'bad'}`;
  text($('upstream-url'), health.upstream.url);
  text(
    $('upstream-last'),
    health.upstream.lastSuccessAt === null
      ? 'never'
      : `${formatAge(now - Date.parse(health.upstream.lastSuccessAt))} ago`,
  );
  text($('upstream-error-rate'), `${(health.upstream.errorRate * 100).toFixed(1)}%`);
  text($('upstream-inflight'), `${upstream.inFlight} (+${upstream.queued} queued)`);
  text($('upstream-rps'), activity.upstreamRequestsPerSecond.toFixed(1));
  text(
    $('upstream-error'),
    health.upstream.lastError === null ? '' : `last error: ${health.upstream.lastError}`,
  );
  sparkline($('latency-spark'), upstream.latencyMs);
  const latencies = upstream.latencyMs;
  text($('latency-last'), latencies.length === 0 ? '–' : `${latencies.at(-1).toFixed(1)} ms`);
  text(
    $('latency-range'),
    latencies.length === 0
      ? ''
      : `${Math.min(...latencies).toFixed(1)}–${Math.max(...latencies).toFixed(1)} ms`,
  );

  text($('connections'), String(health.connections));
  text($('streams'), String(health.streams));
  text($('stale-streams'), String(health.staleStreams));
  text($('polled'), `${health.polledMarkets.book} book · ${health.polledMarkets.price} price`);
  const { freshness } = health;
  const maxAge = $('max-age');
  text(
    maxAge,
    freshness.maxAgeKept
      ? `max age ${formatAge(freshness.maxAgeMs)} kept (oldest ${formatAge(freshness.oldestAgeMs)})`
      : `max age ${formatAge(freshness.maxAgeMs)} NOT kept (oldest ${formatAge(freshness.oldestAgeMs)})`,
  );
  maxAge.className = freshness.maxAgeKept ? 'muted' : 'pill bad';
  text(
    $('poll-rate'),
    `${freshness.pollsPerSecond.achieved.toFixed(1)} polls/s of ${freshness.pollsPerSecond.requested.toFixed(1)} asked (budget ${freshness.pollsPerSecond.budget.toFixed(0)})`,
  );
  const { shares } = snapshot;
  text(
    $('shares'),
    shares.groups === 0
      ? ''
      : `${shares.groups} share group${shares.groups === 1 ? '' : 's'}: ${shares.top
          .slice(0, 3)
          .map((row) => `${row.group} ${(row.share * 100).toFixed(0)}% (${row.targets} targets)`)
          .join(' · ')}`,
  );
  text($('update-rate'), activity.messagesPerSecond.toFixed(1));
  sparkline($('rate-spark'), activity.messagesSeries);
  text($('byte-rate'), `${formatBytes(activity.bytesPerSecond)}/s sent`);

  text($('err-upstream'), String(activity.totals.upstreamFailures));
  text($('err-requests'), String(activity.totals.requestErrors));
  text($('err-slow'), String(activity.totals.slowConsumerCloses));
  text($('err-conflations'), String(activity.totals.conflations));
  const refusals = Object.entries(activity.totals.refusals).filter(([, count]) => count > 0);
  text($('err-refused'), String(refusals.reduce((sum, [, count]) => sum + count, 0)));
  text($('refusal-reasons'), refusals.map(([reason, count]) => `${reason} ${count}`).join(' · '));
  $('recent-errors').replaceChildren(
    ...activity.recentErrors.map((error) => {
      const item = document.createElement('li');
      item.textContent = `${error.at.slice(11, 19)} ${error.message}`;
      return item;
    }),
  );

  renderStreams(streams, now);
}

function renderStreams(streams, now) {
  const body = $('streams-body');
  $('streams-empty').hidden = streams.length > 0;
  body.replaceChildren(
    ...streams.map((stream) => {
      const row = document.createElement('tr');
      row.dataset.market = stream.market;
      row.dataset.state = stream.state;
      if (stream.market === selectedMarket()) row.classList.add('selected');
      const title = stream.title ?? titles.get(stream.market) ?? stream.market;
      const channel = stream.channel === 'book' ? `book ${stream.depth ?? 'full'}` : stream.channel;
      const cells = [
        [title, 'title'],
        [channel],
        [stream.state, `state`],
        // Hidden on a narrow screen, so that subs and seq stay in view (book.css).
        [stream.lastSnapshotAgeMs === null ? '–' : formatAge(stream.lastSnapshotAgeMs), 'num wide-only'],
        [stream.lastChangeAgeMs === null ? '–' : formatAge(stream.lastChangeAgeMs), 'num wide-only'],
        [`${stream.pollIntervalMs} ms`, 'num wide-only'],
        // How far back the stream's record goes (docs/history.md); '–' with nothing recorded.
        [
          stream.recordFrom === null ? '–' : formatDuration(now - Date.parse(stream.recordFrom)),
          'num wide-only',
        ],
        [String(stream.subscribers), 'num'],
        [String(stream.seq), 'num'],
      ];
      for (const [value, className] of cells) {
        const cell = document.createElement('td');
        if (className === 'state') {
          const pill = document.createElement('span');
          pill.className = `pill ${value}`;
          pill.textContent = value;
          cell.append(pill);
        } else {
          cell.textContent = value;
          if (className !== undefined) cell.className = className;
        }
        row.append(cell);
      }
      row.title = stream.market;
      // The oracle's feed streams and the one probabilities stream are not markets to open.
      if (MARKET_ID.test(stream.market))
        row.addEventListener('click', () => openMarket(stream.market, title));
      return row;
    }),
  );
}

// --- Market picker --------------------------------------------------------------------------------

/** Market titles by id, from the picker's list (the stream table shows them too). */
const titles = new Map();
let markets = [];

async function loadMarkets() {
  try {
    const response = await fetch('/status/markets?status=all');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    markets = (await response.json()).markets;
    for (const market of markets) titles.set(market.id, market.title);
    renderPicker();
  } catch (error) {
    text($('market-count'), `could not list upstream markets (${error.message}); retrying`);
  }
}

function renderPicker() {
  const needle = $('market-search').value.trim().toLowerCase();
  const status = $('market-status').value;
  const shown = markets.filter(
    (market) =>
      (status === '' || market.status === status) &&
      (needle === '' || market.title.toLowerCase().includes(needle)),
  );
  const now = Date.now();
  $('market-list').replaceChildren(
    ...shown.map((market) => {
      const item = document.createElement('li');
      item.dataset.market = market.id;
      if (market.id === selectedMarket()) item.classList.add('selected');
      const title = document.createElement('span');
      title.textContent = market.title;
      const details = document.createElement('span');
      details.className = 'details';
      const when = formatExpiry(market.status, Date.parse(market.expiresAt), now);
      details.textContent = `${when} · vol ${Math.round(market.volume).toLocaleString()}`;
      item.append(title, details);
      item.addEventListener('click', () => openMarket(market.id, market.title));
      return item;
    }),
  );
  const label = status === '' ? '' : `${status.toLowerCase()} `;
  text($('market-count'), `${shown.length} ${label}markets shown of ${markets.length} upstream`);
}

$('market-search').addEventListener('input', renderPicker);
$('market-status').addEventListener('change', renderPicker);
void loadMarkets();
setInterval(loadMarkets, 30_000);
