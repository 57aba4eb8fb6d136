/**
 * @module history/stored-time
 * How a store keeps a message's `ts` and `rts`: as epoch milliseconds (what a time range is read
 * by), with the text as sent beside them only where the milliseconds do not give it back.
 */

/**
 * The millisecond ISO form on a day every month has and a real hour: such a text is what its
 * milliseconds give back, so it needs no text built to check it. Any other text (another precision,
 * an offset, a day 29 to 31 that V8 would roll into the next month) is checked by building it.
 */
const PLAIN_ISO_MS =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * A time as stored: its epoch milliseconds, and its text only when the milliseconds do not give it
 * back (another precision or offset); a text that is no time at all is kept as text at 0. Called
 * twice for every recorded message, so the common form skips building a text to compare.
 */
export function storedTime(text: string): { ms: number; text: string | undefined } {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return { ms: 0, text };
  if (PLAIN_ISO_MS.test(text)) return { ms, text: undefined };
  return { ms, text: new Date(ms).toISOString() === text ? undefined : text };
}
