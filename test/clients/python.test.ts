/**
 * The Python client (clients/python), installed into an empty virtual environment, against a real
 * relay over the simulator: its pytest suite keeps every channel verified, records the depth-10
 * book's states, and resumes with no gap after its connection is cut; here those states are compared
 * with what the JavaScript SDK on the same relay holds at the same seq.
 *
 * Its tests that need no relay run in python-offline.test.ts.
 *
 * Why a vitest file runs pytest: `npm test` (and so CI) then covers both SDKs with one command, and
 * the relay, the simulator and the JavaScript client the Python one is compared with all live here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../packages/client/src/node.ts';
import type { BookState } from '../../packages/protocol/src/protocol/book.ts';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';
import { type Harness, startHarness } from '../support/harness.ts';

interface RecordedState {
  epoch: string;
  seq: number;
  checksum: number;
  bids: BookState['bids'];
  asks: BookState['asks'];
}

describe.skipIf(!(await pythonAvailable()))('the Python client against a relay', () => {
  let harness: Harness;
  let python: string;
  let scratch: string;

  beforeAll(async () => {
    [python, harness] = await Promise.all([installedPythonClient(), startHarness({ sim: { tickMs: 20 } })]);
    scratch = mkdtempSync(join(tmpdir(), 'market-relay-py-test-'));
  });

  afterAll(async () => {
    await harness?.stop();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps a depth-10 book equal to the JavaScript SDK at every seq, every channel verified, resumes with no gap', async () => {
    const response = await fetch(`${harness.relay.url}/status/markets`);
    const { markets } = (await response.json()) as { markets: { id: string; status: string }[] };
    const market = markets.find((candidate) => candidate.status === 'ACTIVE')!.id;

    const js = connect(harness.relay.url, { backoff: { baseMs: 50 } });
    const held = new Map<string, BookState>();
    const book = js.subscribeBook(market, { depth: 10 });
    const hold = ({ message, state }: { message: { epoch: string; seq: number }; state: BookState }) => {
      held.set(`${message.epoch}/${message.seq}`, state);
    };
    book.on('snapshot', hold);
    book.on('update', hold);
    try {
      const record = join(scratch, 'book.jsonl');
      const result = await runPytest(python, ['test_live_relay.py'], {
        MARKET_RELAY_URL: harness.relay.url,
        MARKET_RELAY_MARKET: market,
        MARKET_RELAY_BOOK_RECORD: record,
        MARKET_RELAY_EXPECT_INSTALLED: '1',
      });
      expect(result.code, result.output).toBe(0);
      expect(result.output).not.toMatch(/skipped/);

      const recorded = readFileSync(record, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as RecordedState);
      expect(recorded.length).toBeGreaterThanOrEqual(25);
      for (const state of recorded) {
        const javascript = held.get(`${state.epoch}/${state.seq}`);
        expect(javascript, `the JavaScript client at ${state.epoch}/${state.seq}`).toBeDefined();
        expect({ bids: state.bids, asks: state.asks }).toEqual({
          bids: javascript!.bids,
          asks: javascript!.asks,
        });
      }
    } finally {
      await js.close();
    }
  });
});
