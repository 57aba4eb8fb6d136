/**
 * @module config/poll-options
 * The options of how the upstream budget is spent (docs/scheduler.md) and of what one connection or
 * API key may add to it (docs/operations.md "Isolation"), declared like every other option of
 * `serve` (./config.ts reads them).
 */
import { z } from 'zod';
import { schedulerModes } from '../relay/poll/scheduler.ts';
import { integerOption, type OptionSpec } from './option-spec.ts';

/** Every stream is confirmed at least this often unless configured otherwise. */
export const DEFAULT_MAX_AGE_MS = 30_000;

export const pollOptions = {
  scheduler: {
    env: 'SCHEDULER',
    doc: 'how the poll budget is spent: `freshness` (change hints and change rates first) or `round-robin` (every market alike) ([scheduler.md](scheduler.md))',
    schema: z.enum(schedulerModes),
    default: 'freshness',
    expected: 'freshness or round-robin',
    placeholder: 'MODE',
    help: 'how the poll budget is spent: freshness (change rates, hints) or round-robin',
  },
  'max-age-ms': integerOption({
    env: 'MAX_AGE_MS',
    doc: 'every stream is confirmed by upstream at least this often, whatever the scheduler prefers (not below `--book-poll-ms`)',
    min: 100,
    max: 3_600_000,
    default: String(DEFAULT_MAX_AGE_MS),
    placeholder: 'MS',
    help: 'every stream is confirmed at least this often while the budget allows (>= --book-poll-ms)',
  }),
  'max-private-markets': integerOption({
    env: 'MAX_PRIVATE_MARKETS',
    doc: 'markets per connection that no other connection subscribes to ([Isolation](#isolation))',
    min: 1,
    max: 100_000,
    default: '200',
    help: 'markets only one connection wants, at most per connection',
  }),
  'max-private-markets-per-key': integerOption({
    env: 'MAX_PRIVATE_MARKETS_PER_KEY',
    doc: 'the same for all connections of one API key together',
    min: 1,
    max: 1_000_000,
    default: '1000',
    help: "markets only one API key's connections want, at most per key",
  }),
  'new-markets-per-second': integerOption({
    env: 'NEW_MARKETS_PER_SECOND',
    doc: 'markets the relay does not poll yet that one connection may add per second (burst: 100, one full request)',
    min: 1,
    max: 10_000,
    default: '20',
    help: 'markets new to the relay a connection may add per second',
  }),
  'new-markets-per-second-per-key': integerOption({
    env: 'NEW_MARKETS_PER_SECOND_PER_KEY',
    doc: 'the same for all connections of one API key together',
    min: 1,
    max: 100_000,
    default: '50',
    help: "markets new to the relay one API key's connections may add per second together",
  }),
  'unknown-lookups-per-second': integerOption({
    env: 'UNKNOWN_LOOKUPS_PER_SECOND',
    doc: "upstream lookups per second, relay-wide (burst 10), for market ids upstream's catalogue does not list",
    min: 1,
    max: 1_000,
    default: '2',
    help: 'upstream lookups per second, relay-wide, for ids the market catalogue does not list',
  }),
} satisfies Record<string, OptionSpec>;
