/**
 * @module observability/share-report
 * The share of the polling budget each client address group (or API key) uses and the poll
 * targets it holds (relay/poll/share-groups.ts), as the status page and the metrics show it: the
 * heaviest few by name, the rest as a count, so that neither grows with the number of addresses.
 */
import type { GroupShare } from '../relay/poll/share-groups.ts';

/** Groups named on the status page. */
export const STATUS_TOP_GROUPS = 10;

export interface ShareRow {
  /** `address 203.0.113.7`, `address 2001:db8::/64`, `key 1a2b3c4d` (a digest), `relay` (its own). */
  group: string;
  /** Poll targets it holds, alone or with others. */
  targets: number;
  /** Upstream requests per second it paid for, over the last few seconds. */
  requestsPerSecond: number;
  /** Its part (0..1) of what every group paid. */
  share: number;
}

export interface ShareReport {
  /** Groups holding at least one poll target. */
  groups: number;
  /** The heaviest, most first. */
  top: ShareRow[];
}

export function shareReport(shares: readonly GroupShare[], top: number): ShareReport {
  return {
    groups: shares.length,
    top: shares.slice(0, top).map((share) => ({
      // A connection without a known address (tests, internal use) is named as such, never by object.
      group: typeof share.group === 'string' ? share.group : 'connection',
      targets: share.targets,
      requestsPerSecond: Math.round(share.requestsPerSecond * 100) / 100,
      share: Math.round(share.share * 1000) / 1000,
    })),
  };
}
