/**
 * @module bench/scenarios/poll-capacity-windows
 * One measurement window of the poll-capacity scenario (bench/scenarios/poll-capacity.ts): the
 * relay's and the floor's counts and CPU sampled at both ends, and what they did in between.
 */
import { bookPolls, type PollCounts } from '../lib/book-polls.ts';
import { fixed } from '../lib/report.ts';
import { type UsageDelta, type UsageSample, usageBetween } from '../lib/usage.ts';

export interface FloorCounts {
  completed: number;
  failures: number;
  bodyBytes: number;
  /** Bodies that came with a `Content-Encoding`. */
  encoded: number;
  /** Request times summed, ms. */
  durationMs: number;
}

export type Sample = [UsageSample, PollCounts, UsageSample, FloorCounts, PollCounts];

/** One window of the relay and the floor side by side. */
export interface Round {
  relay: UsageDelta;
  floor: UsageDelta;
  polls: number;
  completed: number;
  bodyBytes: number;
  compressed: number;
  /** Book polls' times summed (asked to applied), ms; the floor's requests' likewise. */
  relayPollMs: number;
  floorRequestMs: number;
  relayFailures: number;
  floorFailures: number;
  ratio: number;
}

export function describeRound(round: Round): string {
  const relayUs = round.relay.cpuUs / Math.max(1, round.polls);
  const floorUs = round.floor.cpuUs / Math.max(1, round.completed);
  const relayRate = (round.polls * 1000) / round.relay.wallMs;
  const floorRate = (round.completed * 1000) / round.floor.wallMs;
  return (
    `relay ${fixed(relayRate, 0)} polls/s, ${fixed(relayUs, 0)} µs/poll; ` +
    `floor ${fixed(floorRate, 0)} req/s, ${fixed(floorUs, 0)} µs/poll; ${fixed(round.ratio, 2)}x`
  );
}

export function roundBetween(
  [relayStart, pollsBefore, floorStart, floorBefore, timesBefore]: Sample,
  [relayEnd, pollsAfter, floorEnd, floorAfter, timesAfter]: Sample,
): Round {
  const relay = usageBetween(relayStart, relayEnd);
  const floor = usageBetween(floorStart, floorEnd);
  const polls = bookPolls(pollsBefore, pollsAfter, 'ok');
  const completed = floorAfter.completed - floorBefore.completed;
  return {
    relay,
    floor,
    polls,
    completed,
    bodyBytes: floorAfter.bodyBytes - floorBefore.bodyBytes,
    compressed: floorAfter.encoded - floorBefore.encoded,
    relayPollMs: bookPolls(timesBefore, timesAfter, 'ok'),
    floorRequestMs: floorAfter.durationMs - floorBefore.durationMs,
    relayFailures: bookPolls(pollsBefore, pollsAfter, 'error'),
    floorFailures: floorAfter.failures - floorBefore.failures,
    ratio: relay.cpuUs / Math.max(1, polls) / (floor.cpuUs / Math.max(1, completed)),
  };
}
