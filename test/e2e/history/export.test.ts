/**
 * What a live client received of a book comes back from `GET /v1/history/book` as the very same
 * text, line for line (seq, epoch, data, checksum and every other field), from a relay in its own
 * process recording into a temporary `--data-dir`; and after that relay is killed with SIGKILL and
 * started again on the same folder, what it had recorded before the last flush window is still there.
 * Bad requests get their documented 400s.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ChildRelay } from '../../support/cluster/child-relay.ts';
import { FLUSH_WINDOW_MS, useCrashRecording } from '../../support/crash-recording.ts';
import { waitFor } from '../../support/wait-for.ts';

const crash = useCrashRecording(47, 'history-export-');
const { relays, recordingRelay } = crash;

/** Subscribes to one full book and keeps the raw text of every snapshot and update, with when it came. */
async function liveBook(relay: ChildRelay, market: string) {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  const received: { text: string; at: number }[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const type = (JSON.parse(text) as { type: string }).type;
    if (type === 'snapshot' || type === 'update') received.push({ text, at: Date.now() });
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ op: 'subscribe', channel: 'book', markets: [market] }));
  return { received, close: () => socket.close() };
}

async function exported(relay: ChildRelay, query: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${relay.url}/v1/history/book?${query}`);
  return { status: response.status, text: await response.text() };
}

describe('the NDJSON export of a recorded book', () => {
  it('is what a live client received, also across a SIGKILL and a restart', async () => {
    const market = crash.sim().market.activeMarketIds()[0]!;
    const from = new Date(Date.now() - 1_000).toISOString();
    const first = await recordingRelay();
    const before = await liveBook(first, market);
    await waitFor('a few seconds of a changing book', () => before.received.length >= 20, {
      timeoutMs: 15_000,
    });
    const query = () => `market=${market}&from=${from}&to=${new Date(Date.now() + 1_000).toISOString()}`;

    const live = before.received.map((message) => message.text);
    const lines = (await exported(first, query())).text.trimEnd().split('\n');
    // Every message received is in the record, in order, as the same text (the export flushes first).
    expect(lines.slice(0, live.length)).toEqual(live);

    // Recording goes on through the timer alone (no export flushing it) for a few flush windows...
    const exportedAt = Date.now();
    await waitFor(
      'messages recorded only by the flush timer',
      () =>
        before.received.filter((message) => message.at > exportedAt + 1).length >= 5 &&
        Date.now() - exportedAt > 3 * FLUSH_WINDOW_MS,
    );
    // ...and then the relay is killed outright: only what arrived within the flush window may be missing.
    const killedAt = Date.now();
    await first.stop('SIGKILL');
    before.close();
    const second = await recordingRelay();
    const after = await liveBook(second, market);
    await waitFor('the restarted relay to serve the book', () => after.received.length >= 3, {
      timeoutMs: 15_000,
    });
    const servedSince = after.received.map((message) => message.text);
    const kept = (await exported(second, query())).text.trimEnd().split('\n');
    const surely = before.received.filter((message) => message.at < killedAt - 2 * FLUSH_WINDOW_MS);
    expect(surely.length).toBeGreaterThan(live.length);
    expect(kept.slice(0, surely.length)).toEqual(surely.map((message) => message.text));
    // The restarted relay's own messages follow, in a new epoch.
    const epochs = new Set(kept.map((line) => (JSON.parse(line) as { epoch: string }).epoch));
    expect(epochs.size).toBe(2);
    expect(kept).toEqual(expect.arrayContaining(servedSince));
    after.close();
  });

  it('answers bad requests with a 400 and what was wrong', async () => {
    const relay = relays.at(-1) ?? (await recordingRelay());
    const market = crash.sim().market.activeMarketIds()[0]!;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: [string, string, string][] = [
      ['book', `market=${market}&from=${iso(now)}&to=${iso(now - 1_000)}`, 'bad_request'],
      ['book', `market=${market}&from=yesterday`, 'bad_request'],
      ['book', `from=${iso(now - 1_000)}`, 'bad_request'],
      ['book', `market=${market}&from=${iso(now - 1_000)}&format=csv`, 'bad_request'],
      [
        'book',
        `market=${market}&from=${iso(now - 3 * 86_400_000)}&to=${iso(now - 2 * 86_400_000)}`,
        'out_of_retention',
      ],
      ['nonsense', `market=${market}&from=${iso(now - 1_000)}`, 'unknown_channel'],
    ];
    for (const [channel, query, code] of cases) {
      const response = await fetch(`${relay.url}/v1/history/${channel}?${query}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: string }).error, query).toBe(code);
    }
  });

  it('shows the record in /health and /metrics', async () => {
    const relay = relays.at(-1) ?? (await recordingRelay());
    const health = await waitFor('the store figures to be read', async () => {
      const body = (await (await fetch(`${relay.url}/health`)).json()) as { history: { rows: number } };
      return body.history.rows > 0 && body.history;
    });
    expect(health).toMatchObject({ recording: true, writing: true, writeFailures: 0 });
    const metrics = await (await fetch(`${relay.url}/metrics`)).text();
    expect(metrics).toMatch(/^market_relay_history_rows [1-9]/m);
    expect(metrics).toMatch(/^market_relay_history_write_failures_total 0$/m);
  });
});
