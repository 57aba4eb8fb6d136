/**
 * @module config/group-options
 * The options of what one connection and one client address group may hold of the costly stream kinds
 * (`rest` paths, catalogue filters and each bound a channel declares) and how fast a group may start
 * streams (docs/operations.md "Isolation"), declared like every other option of `serve` (./config.ts
 * reads them into the relay's isolation limits).
 */
import { channelGroupBounds, defaultGroupLimits } from '../relay/admission/group-streams.ts';
import type { ChannelGroupLimits } from '../relay/channels/relay-registry.ts';
import { integerOption, type OptionSpec } from './option-spec.ts';

const fallback = (value: number): string => String(value);

/** The two options of each bound a channel declares: `--max-<option>` and `--max-<option>-per-address`. */
function channelBoundOptions(): Record<string, OptionSpec> {
  const options: Record<string, OptionSpec> = {};
  for (const { noun, doc, option, perConnection, perAddress } of channelGroupBounds.values()) {
    const env = `MAX_${option.toUpperCase().replaceAll('-', '_')}`;
    options[`max-${option}`] = integerOption({
      env,
      doc: `${doc} one connection may hold`,
      min: 1,
      max: 1_000,
      default: fallback(perConnection.default),
      help: `distinct ${noun} per connection`,
    });
    options[`max-${option}-per-address`] = integerOption({
      env: `${env}_PER_ADDRESS`,
      doc: 'the same for all connections of one client address together',
      min: 1,
      max: 100_000,
      default: fallback(perAddress.default),
      help: `distinct ${noun} one client address's connections hold together`,
    });
  }
  return options;
}

/** The limits of the bounds channels declare, read from their options by `number`. */
export function channelBoundLimits(number: (option: string) => number): ChannelGroupLimits {
  const limits = [...channelGroupBounds.values()].flatMap(({ option, perConnection, perAddress }) => [
    [perConnection.field, number(`max-${option}`)],
    [perAddress.field, number(`max-${option}-per-address`)],
  ]);
  // Every field of ChannelGroupLimits is one declared bound's.
  return Object.fromEntries(limits) as ChannelGroupLimits;
}

export const groupOptions = {
  'max-rest-paths': integerOption({
    env: 'MAX_REST_PATHS',
    doc: 'distinct `rest` paths one connection may hold ([Isolation](#isolation))',
    min: 1,
    max: 1_000,
    default: fallback(defaultGroupLimits.maxRestPaths),
    help: 'distinct rest paths per connection',
  }),
  'max-rest-paths-per-address': integerOption({
    env: 'MAX_REST_PATHS_PER_ADDRESS',
    doc: 'the same for all connections of one client address (IPv6: its `--ipv6-prefix-length` prefix) together, each path once however many of them hold it',
    min: 1,
    max: 100_000,
    default: fallback(defaultGroupLimits.maxRestPathsPerAddress),
    help: "distinct rest paths one client address's connections hold together",
  }),
  'max-catalogue-filters': integerOption({
    env: 'MAX_CATALOGUE_FILTERS',
    doc: 'distinct catalogue filters (`markets` streams) one connection may hold',
    min: 1,
    max: 1_000,
    default: fallback(defaultGroupLimits.maxCatalogueFilters),
    help: 'distinct catalogue filters (markets streams) per connection',
  }),
  'max-catalogue-filters-per-address': integerOption({
    env: 'MAX_CATALOGUE_FILTERS_PER_ADDRESS',
    doc: 'the same for all connections of one client address together',
    min: 1,
    max: 100_000,
    default: fallback(defaultGroupLimits.maxCatalogueFiltersPerAddress),
    help: "distinct catalogue filters one client address's connections hold together",
  }),
  ...channelBoundOptions(),
  'new-streams-per-second-per-address': integerOption({
    env: 'NEW_STREAMS_PER_SECOND_PER_ADDRESS',
    doc: 'streams the relay does not have yet (any channel) that the connections of one client address may start per second together (burst: 4 s worth, at least 200); joining a stream someone holds is free',
    min: 1,
    max: 100_000,
    default: fallback(defaultGroupLimits.newStreamsPerSecondPerAddress),
    help: "streams new to the relay one client address's connections may start per second",
  }),
  'unconfirmed-paths-per-second-per-address': integerOption({
    env: 'UNCONFIRMED_PATHS_PER_SECOND_PER_ADDRESS',
    doc: '`rest` paths (and catalogue filters naming a token) upstream has not answered for this relay yet that one client address may start per second (burst: 10 s worth)',
    min: 1,
    max: 10_000,
    default: fallback(defaultGroupLimits.unconfirmedPathsPerSecondPerAddress),
    help: 'rest paths upstream has not answered yet one client address may start per second',
  }),
} satisfies Record<string, OptionSpec>;
