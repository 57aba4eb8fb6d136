/**
 * @module relay/streams/recorded
 * A stream message as the history store keeps it (history/store.ts), and back: the fields of a sent
 * `snapshot` or `update` read from its JSON text once, off the fan-out path, when the recorder
 * flushes; and the text rebuilt from them, byte for byte the one that was sent, by the same builder
 * the stream used (./frame.ts), for an export or a replay.
 */
import { onTheWire } from '../../../packages/protocol/src/protocol/channels.ts';
import type { BookDepth, Channel } from '../../../packages/protocol/src/protocol/messages.ts';
import type { RecordedMessage } from '../../history/store.ts';
import { hasDepths } from '../channels/relay-registry.ts';
import { dataMessage, type Frame, groupOf, type MessageSubject } from './frame.ts';

/** The stream a message was sent on: what the message text alone would have to be searched for. */
export interface RecordedSubject extends MessageSubject {
  readonly key: string;
}

/**
 * Reads a sent message's fields from its text. A JSON string escapes every `"` inside it, so the
 * first `"ts":"`, `"rts":"` and `"data":` of the text are the message's own keys, and `data` is
 * the last field but an optional trailing `checksum` (./frame.ts builds them in that order).
 */
export function recordedOf(
  subject: RecordedSubject,
  frame: Pick<Frame, 'text' | 'position'>,
  type: 'snapshot' | 'update',
): RecordedMessage {
  const text = frame.text;
  const position = frame.position;
  if (position === undefined) throw new Error(`not a stream message: ${text.slice(0, 80)}`);
  const dataStart = text.indexOf('"data":') + '"data":'.length;
  const checksum = trailingChecksum(text);
  const dataEnd = checksum === undefined ? text.length - 1 : checksum.at;
  return {
    channel: subject.channel,
    stream: subject.key,
    market: subject.market,
    depth: hasDepths(subject.channel) ? (subject.depth ?? null) : undefined,
    ...groupOf(subject),
    epoch: position.epoch,
    seq: position.seq,
    ts: stringField(text, 'ts'),
    rts: stringField(text, 'rts'),
    type,
    data: text.slice(dataStart, dataEnd),
    checksum: checksum?.value,
  };
}

/** The text that was sent for `record`. */
export function sentText(record: RecordedMessage): string {
  const subject = {
    channel: record.channel as Channel,
    market: record.market,
    depth: hasDepths(record.channel) ? ((record.depth ?? null) as BookDepth) : undefined,
    group: record.group,
  };
  const at = { epoch: record.epoch, seq: record.seq, ts: record.ts, rts: record.rts };
  // `data` goes in as a placeholder and its recorded text takes the placeholder's place: the last
  // `"data":0` of the text is the field, as only `checksum` (a number) can follow it.
  const envelope = JSON.stringify(onTheWire(dataMessage(subject, record.type, 0, at, record.checksum)));
  const at0 = envelope.lastIndexOf('"data":0');
  return `${envelope.slice(0, at0 + '"data":'.length)}${record.data}${envelope.slice(at0 + '"data":0'.length)}`;
}

const CHECKSUM_KEY = ',"checksum":';

/**
 * The `checksum` that ends a message's text, and where its key starts: the text's last
 * `,"checksum":` followed by digits alone up to the closing brace (a key of that name inside `data`
 * is followed by more than that). Searched from the end, as the message is recorded per send.
 */
function trailingChecksum(text: string): { at: number; value: number } | undefined {
  const at = text.lastIndexOf(CHECKSUM_KEY);
  const digitsFrom = at + CHECKSUM_KEY.length;
  const digitsTo = text.length - 1;
  if (at < 0 || digitsTo <= digitsFrom || text.charCodeAt(digitsTo) !== 0x7d) return undefined;
  for (let i = digitsFrom; i < digitsTo; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return undefined;
  }
  return { at, value: Number(text.slice(digitsFrom, digitsTo)) };
}

function stringField(text: string, name: string): string {
  const key = `"${name}":"`;
  const start = text.indexOf(key) + key.length;
  return text.slice(start, text.indexOf('"', start));
}
