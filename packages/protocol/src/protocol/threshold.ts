/**
 * @module protocol/threshold
 * What a `price` subscription's `threshold` may be (docs/protocol.md "Per-subscription options"):
 * a decimal string above 0 and at most `MAX_THRESHOLD`, with at most `MAX_THRESHOLD_DECIMALS`
 * places, in one spelling per value. Shared by the relay's request schema and the client SDK, which
 * checks it before anything is sent.
 */
import { compareDecimals, isZeroDecimal } from './decimal.ts';
import { MAX_THRESHOLD, MAX_THRESHOLD_DECIMALS } from './limits.ts';

export const thresholdExpected = `expected a decimal string above 0 and at most "${MAX_THRESHOLD}", with at most ${MAX_THRESHOLD_DECIMALS} decimal places (such as "0.01")`;

const thresholdForm = new RegExp(`^\\d+(\\.\\d{1,${MAX_THRESHOLD_DECIMALS}})?$`);

export function isThreshold(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    thresholdForm.test(value) &&
    !isZeroDecimal(value) &&
    compareDecimals(value, MAX_THRESHOLD) <= 0
  );
}

/** "0.010" as "0.01", "01" as "1": one spelling per value, so equal thresholds share one group. */
export function shortestThreshold(value: string): string {
  const [whole = '', fraction = ''] = value.split('.');
  const digits = whole.replace(/^0+(?=\d)/, '');
  const places = fraction.replace(/0+$/, '');
  return places === '' ? digits : `${digits}.${places}`;
}
