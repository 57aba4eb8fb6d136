/**
 * @module status-page/tabs
 * The live view's tabs, in the order the tab bar shows them. A `market` tab shows the picked market
 * on one or more of its channels; a `page` tab shows something of all upstream (the catalogue, a
 * user) and may hand a market to the market tabs through `openMarket`.
 *
 * Each tab's module is loaded on first use and exports one function, called with the view's root
 * element and `{ channel, market, title, token, transport, onClose, openMarket }` (`market` and
 * `title` on market tabs only); it draws into the root, calls `onClose` when its close button is
 * pressed, and returns `{ close() }`, which live-view.js calls before another view takes the root.
 * A new tab is one entry below and its module; view-parts.js has the pieces every view shares.
 */

const channelView = async () => (await import('./channel-view.js')).openChannelView;

export const TABS = [
  { id: 'book', scope: 'market', load: async () => (await import('./book-view.js')).openBookView },
  { id: 'trades', scope: 'market', load: channelView },
  { id: 'market', scope: 'market', load: channelView },
  { id: 'probabilities', scope: 'market', load: channelView },
  { id: 'oracle', scope: 'market', load: channelView },
  { id: 'orders', scope: 'market', load: channelView },
  { id: 'candles', scope: 'market', load: channelView },
  {
    id: 'catalogue',
    scope: 'page',
    load: async () => (await import('./catalogue-view.js')).openCatalogueView,
  },
  { id: 'users', scope: 'page', load: async () => (await import('./users-view.js')).openUsersView },
];

export function tabNamed(id) {
  return TABS.find((tab) => tab.id === id);
}
