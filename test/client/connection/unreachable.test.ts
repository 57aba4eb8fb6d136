/**
 * A client that never gets a connection says why, instead of waiting for ever without a word: in a
 * browser a relay that refuses the page's origin (HTTP 403 on the upgrade) looks like a network
 * failure (an `error` event without detail, then close 1006), so the SDK cannot tell a refusal from
 * a relay that is down. After `reportUnreachableAfter` failed attempts, none ever open, it emits
 * one `unreachable` error naming the likely causes and `markets()` rejects with it; it goes on
 * retrying, and answers once a connection opens. A client that was connected once keeps retrying
 * quietly, as before.
 */

import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { WebSocketLike } from '../../../packages/client/src/connection/socket.ts';
import {
  connect,
  type RelayClient,
  type RelayClientError,
  type WebSocketConstructor,
} from '../../../packages/client/src/node.ts';
import { type Harness, startHarness } from '../../support/harness.ts';
import { waitFor } from '../../support/wait-for.ts';

/** A socket as a browser shows it: an upgrade refused (error, close 1006), or opened then dropped. */
class BrowserSocket implements WebSocketLike {
  readyState = 0;
  onopen: ((event: object) => void) | null = null;
  onmessage: ((event: object) => void) | null = null;
  onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null = null;
  onerror: ((event: object) => void) | null = null;

  constructor(opens: boolean) {
    setTimeout(() => {
      if (opens) {
        this.readyState = 1;
        this.onopen?.({});
      } else {
        // The browser gives no status and no message: the 403 stays in its network log.
        this.onerror?.({});
      }
      setTimeout(() => {
        this.readyState = 3;
        this.onclose?.({ code: 1006, reason: '', wasClean: false });
      }, 1);
    }, 1);
  }

  send(): void {}

  close(): void {
    this.readyState = 3;
  }
}

/** Sockets in turn: `plan[i]` says what the i-th is (`ws`: a real one); past the plan, refused. */
function browserSockets(plan: readonly ('refused' | 'opens' | 'ws')[]): WebSocketConstructor {
  let made = 0;
  return class {
    constructor(url: string, protocols?: string[]) {
      const kind = plan[made++] ?? 'refused';
      // biome-ignore lint/correctness/noConstructorReturn: each socket is the kind the plan names
      return kind === 'ws' ? new WebSocket(url, protocols) : new BrowserSocket(kind === 'opens');
    }
  } as WebSocketConstructor;
}

const fast = { backoff: { baseMs: 1, maxMs: 2 }, reportUnreachableAfter: 3 };

describe('a client that never gets a connection', () => {
  let client: RelayClient | undefined;
  let harness: Harness | undefined;
  afterEach(async () => {
    await client?.close();
    await harness?.stop();
    client = harness = undefined;
  });

  function start(url: string, plan: readonly ('refused' | 'opens' | 'ws')[]) {
    const errors: RelayClientError[] = [];
    const attempts: number[] = [];
    client = connect(url, { ...fast, WebSocket: browserSockets(plan) });
    client.on('error', (error) => errors.push(error));
    client.on('reconnecting', ({ attempt }) => attempts.push(attempt));
    return { client, errors, attempts };
  }

  it('says why once, rejects markets() with it, and goes on retrying', async () => {
    const { client, errors, attempts } = start('wss://relay.example', []);
    const pending = client.markets();
    const error = await pending.then(
      () => undefined,
      (reason: unknown) => reason as RelayClientError,
    );
    expect(error?.code).toBe('unreachable');
    expect(error?.message).toMatch(/^no connection to wss:\/\/relay\.example\/v1\/ws\?? in 3 attempts: /);
    expect(error?.message).toContain('--allowed-origins');
    expect(error?.message).toContain('API key');
    expect(error?.message).toContain('still retrying');

    await waitFor('three more attempts', () => attempts.length >= 6);
    expect(errors.filter((each) => each.code === 'unreachable')).toEqual([error]);
    expect(client.status).toBe('reconnecting');
    // Asked again while nothing has opened, it answers at once.
    await expect(client.markets()).rejects.toBe(error);
  });

  it('answers markets() once a connection opens after the report', async () => {
    harness = await startHarness({ sim: { markets: 3 } });
    const { client, errors } = start(harness.relay.url, ['refused', 'refused', 'refused', 'ws']);
    await expect(client.markets()).rejects.toMatchObject({ code: 'unreachable' });
    await waitFor('the connection', () => client.status === 'open');
    const markets = await client.markets();
    expect(markets.length).toBeGreaterThan(0);
    expect(errors.map((error) => error.code)).toEqual([
      'connection_failed',
      'connection_failed',
      'connection_failed',
      'unreachable',
    ]);
  });

  it('keeps quiet about failed attempts after it was connected once', async () => {
    const { errors, attempts } = start('wss://relay.example', ['opens']);
    await waitFor('six failed attempts after the drop', () => attempts.length >= 7);
    expect(errors.map((error) => error.code)).not.toContain('unreachable');
  });
});
