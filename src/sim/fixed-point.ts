/**
 * @module sim/fixed-point
 * Exact fixed-point formatting. The simulator keeps every price and size as an integer count of a
 * small unit (bigint or safe integer) and only turns it into a decimal string at the edge, so sums
 * and products are exact (upstream-api.md section 1: prices and sizes are decimal strings).
 */

/** Prices are integers in units of 1e-8, the precision of every upstream price (section 2). */
export const PRICE_SCALE = 8;
/** Sizes are integers in units of 1e-6 (the smallest size the simulator emits is "0.000001"). */
export const SIZE_SCALE = 6;

/** `units / 10^scale` with exactly `places` decimals (`places >= scale`), e.g. 537n,3,8 -> "0.53700000". */
export function formatFixed(units: bigint, scale: number, places: number = scale): string {
  if (places < scale) throw new RangeError('formatFixed cannot drop digits; round first');
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).padEnd(places, '0');
  const sign = negative ? '-' : '';
  return places === 0 ? sign + whole : `${sign}${whole}.${fraction}`;
}

/** `units / 10^scale` with trailing zeros trimmed, e.g. 125500000n,6 -> "125.5", 10000000n,6 -> "10". */
export function formatTrimmed(units: bigint, scale: number): string {
  const fixed = formatFixed(units, scale);
  if (scale === 0) return fixed;
  return fixed.replace(/\.?0+$/, '');
}

/** Round `units` at `fromScale` to `toScale` decimals (half away from zero). */
export function rescale(units: bigint, fromScale: number, toScale: number): bigint {
  if (toScale >= fromScale) return units * 10n ** BigInt(toScale - fromScale);
  const divisor = 10n ** BigInt(fromScale - toScale);
  const half = divisor / 2n;
  return units >= 0n ? (units + half) / divisor : -((-units + half) / divisor);
}

/** A price in 1e-8 units as the 8-decimal string every upstream price uses. */
export function formatPrice(priceUnits: bigint): string {
  return formatFixed(priceUnits, PRICE_SCALE);
}

/** The JSON number form some endpoints use for a price (section 1: "JSON numbers in others"). */
export function priceNumber(priceUnits: bigint): number {
  return Number(priceUnits) / 10 ** PRICE_SCALE;
}

/** Scale of `sizeUnits * priceUnits`, an exact notional value. */
export const NOTIONAL_SCALE = SIZE_SCALE + PRICE_SCALE;
