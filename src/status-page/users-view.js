/**
 * @module status-page/users-view
 * One user of upstream, live: the user's stats, positions and activity, each a `rest` stream of
 * the client SDK (rest-section.js) drawn as a table whose changed cells flash as patches arrive.
 * The user is typed in (names suggested from the leaderboard), picked in the rewards leaderboard
 * (itself a live `rest` stream) or given as `?user=`; with none, the leaderboard's first entry.
 * Clicking a position opens its market in the market tabs. The root's `data-user` names the user.
 */
import { fieldText } from './format.js';
import { listOf, restSection, SHOWN } from './rest-section.js';
import { setParam } from './url-state.js';
import { clearRoot, closableView, connectToRelay, element, viewHead } from './view-parts.js';

const LEADERBOARD = '/api/rewards/leaderboard';

/** A user's sections: the path after `/api/users/:username/`, the table's columns and rows. */
const USER_SECTIONS = [
  { name: 'stats', labels: ['field', 'value'], rows: statRows },
  {
    name: 'positions',
    labels: ['market', 'outcome', 'quantity', 'avg price', 'value'],
    rows: positionRows,
    summary: (body, count) =>
      `total value ${fieldText(body?.total_value_usd)} USD · ${count} positions${beyond(count)}`,
  },
  {
    name: 'activity',
    labels: ['time', 'type', 'market', 'side', 'price', 'size'],
    rows: activityRows,
    summary: (_body, count) => `${count} entries, in upstream's order${beyond(count)}`,
  },
];

export function openUsersView(root, { token, transport, onClose, openMarket }) {
  const client = connectToRelay({ token, transport });
  clearRoot(root);
  const { head, meta, close } = viewHead('Users');
  const form = element('form', 'user-pick');
  const input = element('input', 'view-search');
  input.name = 'user';
  input.placeholder = 'username';
  input.autocomplete = 'off';
  input.setAttribute('aria-label', 'Username');
  const names = element('datalist');
  names.id = 'user-names';
  input.setAttribute('list', names.id);
  const show = element('button', 'close-book', 'show');
  show.type = 'submit';
  form.append(input, names, show);
  const userArea = element('div', 'user-sections');
  root.append(head, form, userArea);

  let user;
  let sections = [];
  let connection = 'connecting';
  const renderMeta = () => {
    meta.textContent = `${user === undefined ? 'no user yet' : `user ${user}`} · ${connection}`;
  };

  const showUser = (name) => {
    if (name === '' || name === user) return;
    for (const section of sections) section.close();
    user = name;
    input.value = name;
    root.dataset.user = name;
    setParam('user', name);
    const base = `/api/users/${encodeURIComponent(name)}`;
    sections = USER_SECTIONS.map((section) =>
      restSection(client, {
        ...section,
        title: section.name,
        path: `${base}/${section.name}`,
        ...(section.name === 'positions'
          ? { onPick: (_key, data) => openMarket(data.market, data.title) }
          : {}),
      }),
    );
    userArea.replaceChildren(...sections.map((section) => section.node));
    renderMeta();
  };

  const leaderboard = restSection(client, {
    name: 'leaderboard',
    title: 'rewards leaderboard',
    path: LEADERBOARD,
    labels: ['#', 'user', 'fee equivalent', 'estimated rebate'],
    rows: leaderboardRows,
    summary: () => 'click a name to show that user',
    onPick: (name) => showUser(name),
    onState: (body) => {
      const entries = leaderboardRows(body);
      names.replaceChildren(...entries.map(({ key }) => new Option(key)));
      if (user === undefined && entries.length > 0) showUser(entries[0].key);
    },
  });
  root.append(leaderboard.node);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showUser(input.value.trim());
  });
  const linked = new URLSearchParams(location.search).get('user');
  if (linked !== null) showUser(linked);
  renderMeta();

  const offs = [
    () => {
      for (const section of [...sections, leaderboard]) section.close();
    },
    client.on('status', ({ status }) => {
      connection = status;
      renderMeta();
    }),
    client.on('error', (error) => {
      meta.textContent = `users · error: ${error.message}`;
    }),
  ];
  return closableView({ root, client, close, offs, streams: [], onClose });
}

function beyond(count) {
  return count > SHOWN ? `, the first ${SHOWN} shown` : '';
}

function statRows(body) {
  const stats = body?.stats;
  if (typeof stats !== 'object' || stats === null || Array.isArray(stats)) return [];
  return Object.entries(stats).map(([field, value]) => ({ key: field, cells: [field, fieldText(value)] }));
}

function positionRows(body) {
  return listOf(body?.positions).map((position) => ({
    key: `${fieldText(position.market_id)} ${fieldText(position.outcome)}`,
    data: { market: fieldText(position.market_id), title: fieldText(position.market_title) },
    cells: [
      fieldText(position.market_title ?? position.market_id),
      fieldText(position.outcome),
      fieldText(position.quantity),
      fieldText(position.avg_price),
      fieldText(position.current_value),
    ],
  }));
}

function activityRows(body) {
  return listOf(body?.activities).map((entry) => ({
    key: fieldText(entry.activity_id),
    cells: [
      typeof entry.activity_timestamp === 'string'
        ? entry.activity_timestamp.slice(0, 19).replace('T', ' ')
        : fieldText(entry.activity_timestamp),
      fieldText(entry.activity_type),
      fieldText(entry.market_title ?? entry.market_id),
      fieldText(entry.side),
      fieldText(entry.price),
      fieldText(entry.size),
    ],
  }));
}

function leaderboardRows(body) {
  return listOf(body?.leaderboard)
    .filter((entry) => typeof entry.username === 'string')
    .map((entry, index) => ({
      key: entry.username,
      cells: [
        String(index + 1),
        entry.username,
        fieldText(entry.fee_equivalent),
        fieldText(entry.estimated_rebate_stablecoin),
      ],
    }));
}
