/**
 * @module sim/catalog
 * The simulator's fixed reference data, drawn once from the seed: the token (asset) catalogue with
 * its oracle feeds, and a few dozen public users (docs/upstream.md, "Token", "User").
 */
import { createPrng, deriveSeed, type Prng, randomUuid } from './prng.ts';

export interface SimToken {
  id: number;
  symbol: string;
  name: string;
  assetType: 'CRYPTO' | 'STOCK';
  country: string;
  sector: string;
  oracleFeedId: string;
  /** Latest oracle price as an integer: price = rawPrice * 10^ORACLE_EXPO. */
  rawPrice: bigint;
  /** Clock time (ms) of the latest oracle update. */
  publishedAt: number;
}

export interface SimUser {
  index: number;
  userId: string;
  username: string;
  walletAddress: string;
  createdAt: number;
}

/** Oracle prices carry 8 decimals: `price = raw_price * 10^expo` with expo -8. */
export const ORACLE_EXPO = -8;
export const USER_COUNT = 48;

type TokenSpec = readonly [string, string, SimToken['assetType'], string, string, number];

/** Crypto tokens trade globally, in one sector: [symbol, name, price in dollars]. */
const CRYPTO: readonly (readonly [string, string, number])[] = [
  ['BTC', 'Bitcoin', 97_000],
  ['ETH', 'Ethereum', 3_400],
  ['SOL', 'Solana', 180],
  ['XRP', 'XRP', 2.35],
  ['DOGE', 'Dogecoin', 0.32],
];

const TOKEN_SPECS: readonly TokenSpec[] = [
  ...CRYPTO.map(
    ([symbol, name, price]): TokenSpec => [symbol, name, 'CRYPTO', 'Global', 'Digital Assets', price],
  ),
  ['AAPL', 'Apple Inc.', 'STOCK', 'United States', 'Technology', 230],
  ['NVDA', 'NVIDIA Corporation', 'STOCK', 'United States', 'Technology', 140],
  ['MSFT', 'Microsoft Corporation', 'STOCK', 'United States', 'Technology', 420],
  ['TSLA', 'Tesla, Inc.', 'STOCK', 'United States', 'Consumer Discretionary', 350],
  ['AMZN', 'Amazon.com, Inc.', 'STOCK', 'United States', 'Consumer Discretionary', 220],
  ['SAP', 'SAP SE', 'STOCK', 'Germany', 'Technology', 260],
  ['TM', 'Toyota Motor Corporation', 'STOCK', 'Japan', 'Consumer Discretionary', 185],
];

const ADJECTIVES = ['swift', 'calm', 'bold', 'lucky', 'quiet', 'brave', 'sharp', 'sunny', 'wise', 'rapid'];
const ANIMALS = ['otter', 'falcon', 'lynx', 'heron', 'bison', 'panda', 'raven', 'gecko', 'moose', 'koala'];

const DAY_MS = 86_400_000;

export function buildTokens(seed: number, startMs: number): SimToken[] {
  const prng = createPrng(deriveSeed(seed, 'tokens'));
  return TOKEN_SPECS.map(([symbol, name, assetType, country, sector, price], index) => ({
    id: index + 1,
    symbol,
    name,
    assetType,
    country,
    sector,
    oracleFeedId: `0x${prng.hex(64)}`,
    rawPrice: BigInt(Math.round(price * 100)) * 1_000_000n,
    publishedAt: startMs,
  }));
}

export function buildUsers(seed: number, startMs: number): SimUser[] {
  const prng = createPrng(deriveSeed(seed, 'users'));
  const taken = new Set<string>();
  const users: SimUser[] = [];
  for (let index = 0; index < USER_COUNT; index++) {
    const username = uniqueUsername(prng, taken);
    users.push({
      index,
      userId: randomUuid(prng),
      username,
      walletAddress: `0x${prng.hex(40)}`,
      createdAt: startMs - prng.int(30, 700) * DAY_MS - prng.int(0, DAY_MS - 1),
    });
  }
  return users;
}

function uniqueUsername(prng: Prng, taken: Set<string>): string {
  for (;;) {
    const candidate = `${prng.pick(ADJECTIVES)}_${prng.pick(ANIMALS)}${prng.int(1, 99)}`;
    if (!taken.has(candidate)) {
      taken.add(candidate);
      return candidate;
    }
  }
}

/** One oracle step: a move of at most 0.05% either way, exact in integers. */
export function moveOraclePrice(token: SimToken, prng: Prng, nowMs: number): void {
  const basisPoints = BigInt(prng.int(-5, 5));
  token.rawPrice += (token.rawPrice * basisPoints) / 10_000n;
  if (token.rawPrice < 1n) token.rawPrice = 1n;
  token.publishedAt = nowMs;
}
