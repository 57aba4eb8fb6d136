/**
 * @module history/stored-time
 * How a store keeps a message's `ts` and `rts`: as epoch milliseconds (what a time range is read
 * by), with the text as sent beside them only where the milliseconds do not give it back.
 */

/**
 * A time as stored: its epoch milliseconds, and its text only when the milliseconds do not give it
 * back (another precision or offset); a text that is no time at all is kept as text at 0.
 */
export function storedTime(text: string): { ms: number; text: string | undefined } {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return { ms: 0, text };
  return { ms, text: new Date(ms).toISOString() === text ? undefined : text };
}
