/**
 * @module test/support/channels/wildcard
 * What a client of wildcard subscriptions (protocol.md "Wildcard subscriptions") was told, and the
 * simulator's admin calls that make markets come and go, shared by the wildcard end-to-end tests.
 */
import { expect } from 'vitest';
import type { Message } from '../clients/message-recorder.ts';
import type { Harness } from '../harness.ts';

/** Markets announced as joined (`subscribed` without id) on `channel`, in order. */
export function announcedJoined(client: { messages: Message[] }, channel: string): string[] {
  return client.messages
    .filter((m) => m.type === 'subscribed' && m.wildcard === true && m.channel === channel)
    .flatMap((m) => m.markets as string[]);
}

export function announcedLeft(client: { messages: Message[] }, channel: string): string[] {
  return client.messages
    .filter((m) => m.type === 'unsubscribed' && m.wildcard === true && m.channel === channel)
    .flatMap((m) => m.markets as string[]);
}

export async function addMarket(harness: Harness): Promise<string> {
  const response = await fetch(`${harness.sim.url}/_sim/markets`, { method: 'POST' });
  return ((await response.json()) as { id: string }).id;
}

export async function settle(
  harness: Harness,
  market: string,
  status: 'EXPIRED' | 'RESOLVED',
): Promise<void> {
  const response = await fetch(`${harness.sim.url}/_sim/markets/${market}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status }),
  });
  expect(response.status).toBe(200);
}

export const sorted = (ids: Iterable<string>) => [...ids].sort();
