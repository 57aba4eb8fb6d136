/**
 * @module test/support/upstream/scripted-prices
 * A fake upstream: the simulator for every request but the batch of prices
 * (`POST /clob/market-prices/batch`), which answers each market the test scripted with the prices
 * it set last, so a relay's `price` stream can be moved field by field, by exact amounts, and counts
 * those batches (the relay's price polls, for a rule counted in polls). A market
 * not scripted gets the bare entry of a market without price data. A test in another process (the
 * Python client's) sets them with `POST /script/prices` `{ market, prices }`.
 */
import type { PriceData } from '../../../packages/protocol/src/protocol/messages.ts';
import { startSimFront } from './scripted-path.ts';

const BATCH_PATH = '/clob/market-prices/batch';
const SCRIPT_PATH = '/script/prices';

export interface ScriptedPrices {
  /** The fake upstream's base URL, for the relay's `upstream`. */
  readonly url: string;
  /** The prices `market` answers with from now on. */
  set(market: string, prices: PriceData): void;
  /** The batches of prices answered so far: one per price poll of a relay with one batch. */
  readonly batches: number;
  close(): Promise<void>;
}

export async function startScriptedPrices(simUrl: string): Promise<ScriptedPrices> {
  const prices = new Map<string, PriceData>();
  let batches = 0;
  const front = await startSimFront(simUrl, (req, res) => {
    if (req.method !== 'POST' || (req.url !== BATCH_PATH && req.url !== SCRIPT_PATH)) return false;
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      if (req.url === SCRIPT_PATH) {
        const script = JSON.parse(body) as { market: string; prices: PriceData };
        prices.set(script.market, script.prices);
        res.writeHead(204).end();
        return;
      }
      batches += 1;
      const { market_ids: ids } = JSON.parse(body) as { market_ids: string[] };
      const timestamp = new Date().toISOString();
      const data = ids.map((id) => ({ market_id: id, ...prices.get(id), timestamp }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data }));
    });
    return true;
  });
  return {
    url: front.url,
    set(market, next) {
      prices.set(market, next);
    },
    get batches() {
      return batches;
    },
    close: () => front.close(),
  };
}
