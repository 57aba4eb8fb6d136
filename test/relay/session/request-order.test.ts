/**
 * A connection's requests are answered in the order they arrived, even when one of them waits
 * (a cluster-mode subscribe reading the cluster's history).
 */
import { describe, expect, it } from 'vitest';
import { RequestOrder } from '../../../src/relay/session/request-order.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('RequestOrder', () => {
  it('runs at once while nothing waits, and after a held request otherwise', async () => {
    const order = new RequestOrder();
    const done: string[] = [];
    order.run(() => done.push('first'));
    expect(done).toEqual(['first']);
    let release: () => void = () => {};
    order.run(() => {
      done.push('held subscribe');
      order.hold(
        new Promise<void>((resolve) => {
          release = resolve;
        }).then(() => {
          done.push('its answer');
        }),
      );
    });
    order.run(() => done.push('ping'));
    expect(done).toEqual(['first', 'held subscribe']);
    release();
    await waitFor('the rest', () => done.length === 4);
    expect(done).toEqual(['first', 'held subscribe', 'its answer', 'ping']);
    order.run(() => done.push('later'));
    await waitFor('idle again', () => done.length === 5);
  });

  it('keeps the order when a held request fails', async () => {
    const order = new RequestOrder();
    const done: string[] = [];
    order.hold(Promise.reject(new Error('redis away')));
    order.run(() => done.push('next'));
    await waitFor('the next request', () => done.length === 1);
  });

  it('answers with what is there at once, and holds the requests behind one that waits', async () => {
    const order = new RequestOrder();
    const done: string[] = [];
    const subscribe = (value: string | Promise<string>) =>
      order.run(() => order.once(value, (fetched) => done.push(fetched), 'rings alone'));
    subscribe('rings');
    expect(done).toEqual(['rings']);
    subscribe(Promise.resolve('history'));
    order.run(() => done.push('ping'));
    subscribe(Promise.reject<string>(new Error('redis away')));
    order.run(() => done.push('pong'));
    expect(done).toEqual(['rings']);
    await waitFor('the rest', () => done.length === 5);
    expect(done).toEqual(['rings', 'history', 'ping', 'rings alone', 'pong']);
  });
});
