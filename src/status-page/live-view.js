/**
 * @module status-page/live-view
 * The page's live view: the tab bar (built from tabs.js) and the one view open below it, on the
 * client SDK over the relay's WebSocket (or SSE with `?transport=sse`). A market picked anywhere
 * (the stream table, the picker, the catalogue, a user's positions) opens in the market tab last
 * used; the page tabs do not need one. The tab and the market are kept in the URL (`?tab=`,
 * `?market=`). The root carries `data-tab` while a view is open.
 */
import { TABS, tabNamed } from './tabs.js';
import { param, setParam } from './url-state.js';

/** protocol.md "Transport": a relay with API keys needs one for the views' connections. */
const token = param('token');
const transport = param('transport') === 'sse' ? 'sse' : undefined;

const root = document.getElementById('live-view');
const bar = document.getElementById('view-tabs');
const hint = document.getElementById('view-hint');

let tab = tabNamed(param('tab')) ?? TABS[0];
/** Where a market picked while a page tab is open is shown. */
let marketTab = tab.scope === 'market' ? tab : TABS[0];
/** The market the market tabs show, `{ id, title }`: kept while a page tab is open. */
let market;
let view;
/** Counts openings, so that a view whose module arrives after a later pick is not opened. */
let openings = 0;

for (const [index, entry] of TABS.entries()) {
  // A gap between the market's channels and the page tabs.
  if (index > 0 && TABS[index - 1].scope !== entry.scope) bar.append(gap());
  const button = document.createElement('button');
  button.type = 'button';
  button.setAttribute('role', 'tab');
  button.dataset.tab = entry.id;
  button.dataset.scope = entry.scope;
  button.textContent = entry.id;
  bar.append(button);
}

bar.addEventListener('click', (event) => {
  const picked = tabNamed(event.target.closest('button[data-tab]')?.dataset.tab);
  if (picked === undefined || (picked === tab && view !== undefined)) return;
  tab = picked;
  if (tab.scope === 'market') marketTab = tab;
  void show();
});

/** Opens `id` in the market tab last used (the book at first). */
export function openMarket(id, title) {
  if (market?.id === id && tab.scope === 'market' && view !== undefined) return;
  market = { id, title };
  setParam('market', id);
  markSelected();
  tab = marketTab;
  void show();
}

/** The market the market tabs show, for the lists that highlight it. */
export function selectedMarket() {
  return market?.id;
}

async function show() {
  const opening = ++openings;
  const replaced = view;
  view = undefined;
  replaced?.close();
  for (const button of bar.querySelectorAll('button[data-tab]'))
    button.setAttribute('aria-selected', String(button.dataset.tab === tab.id));
  setParam('tab', tab === TABS[0] ? undefined : tab.id);
  const needsMarket = tab.scope === 'market' && market === undefined;
  hint.hidden = !needsMarket;
  if (needsMarket) return;
  const open = await tab.load();
  if (opening !== openings) return;
  const opened = open(root, {
    channel: tab.id,
    ...(tab.scope === 'market' ? { market: market.id, title: market.title } : {}),
    token,
    transport,
    openMarket,
    onClose: () => {
      // Called from `close()` too; only the close button of the open view ends the selection.
      if (view !== opened) return;
      view = undefined;
      delete root.dataset.tab;
      hint.hidden = false;
      if (tab.scope !== 'market') return;
      market = undefined;
      setParam('market', undefined);
      markSelected();
    },
  });
  view = opened;
  root.dataset.tab = tab.id;
}

function markSelected() {
  for (const element of document.querySelectorAll('[data-market]')) {
    if (element === root || root.contains(element)) continue;
    element.classList.toggle('selected', element.dataset.market === market?.id);
  }
}

function gap() {
  const node = document.createElement('span');
  node.className = 'tab-gap';
  node.setAttribute('aria-hidden', 'true');
  return node;
}

const linked = param('market');
if (linked !== undefined) market = { id: linked, title: linked };
void show();
