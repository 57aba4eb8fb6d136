/**
 * A stream's subscriber set (relay/streams/subscribers.ts) counts its clients as subscribers come and
 * go, whatever the order: always the members that are not the relay's own.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Subscribers } from '../../../src/relay/streams/subscribers.ts';
import { propertyRuns } from '../../support/property-runs.ts';

interface Member {
  readonly internal?: boolean;
}

describe('Subscribers (property)', () => {
  it('counts the clients among them after any adds, deletes and clears', () => {
    const pool: Member[] = [{}, {}, { internal: true }, { internal: true }, { internal: false }];
    const step = fc.oneof(
      fc.record({ op: fc.constant('add' as const), at: fc.nat({ max: pool.length - 1 }) }),
      fc.record({ op: fc.constant('delete' as const), at: fc.nat({ max: pool.length - 1 }) }),
      fc.record({ op: fc.constant('clear' as const), at: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const subscribers = new Subscribers<Member>();
        for (const { op, at } of steps) {
          if (op === 'add') subscribers.add(pool[at]!);
          else if (op === 'delete') subscribers.delete(pool[at]!);
          else subscribers.clear();
          const clients = [...subscribers].filter((member) => member.internal !== true).length;
          expect(subscribers.clients).toBe(clients);
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
