/**
 * @module test/docs/codes.test
 * Every protocol error code and WebSocket close code the relay can send is documented in the
 * tables of docs/protocol.md, and the tables document no code the relay does not have (the habit
 * of fastify's test that every error is in its Errors reference).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { channels } from '../../packages/protocol/src/protocol/channels.ts';
import { closeCodes, errorCodes } from '../../packages/protocol/src/protocol/messages.ts';
import { protocolDocPath } from './asyncapi-document.ts';

const doc = readFileSync(protocolDocPath, 'utf8');

/** The body of the `## <title>` section, up to the next `## ` heading. */
function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`docs/protocol.md has no "## ${title}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

/** First-column values of the section's table rows that hold a code in backticks, e.g. "| `4008` |". */
function documentedCodes(title: string): string[] {
  return section(title)
    .split('\n')
    .map((line) => /^\|\s*`([^`]+)`\s*\|/.exec(line)?.[1])
    .filter((code): code is string => code !== undefined);
}

/** The "why"/"when" cell of a code's row: documenting a code means saying why it is sent. */
function explanation(title: string, code: string): string {
  const row = section(title)
    .split('\n')
    .find((line) => line.startsWith(`| \`${code}\` |`));
  return row?.split('|')[2]?.trim() ?? '';
}

describe('docs/protocol.md documents every code', () => {
  it('lists each error code of errorCodes, and no other, in the Error codes table', () => {
    expect(documentedCodes('Error codes').sort()).toEqual([...errorCodes].sort());
  });

  it('lists each close code of closeCodes, and no other, in the Close codes table', () => {
    const expected = Object.values(closeCodes).map(String);
    expect(documentedCodes('Close codes').sort()).toEqual(expected.sort());
  });

  it('says for each code when or why the relay sends it', () => {
    for (const code of errorCodes) expect(explanation('Error codes', code), code).not.toBe('');
    for (const code of Object.values(closeCodes)) {
      expect(explanation('Close codes', String(code)), String(code)).not.toBe('');
    }
  });

  it('names every channel where it says which channels are known', () => {
    const unknownChannel = explanation('Error codes', 'unknown_channel');
    for (const channel of channels) expect(unknownChannel, channel).toContain(`\`${channel}\``);
  });

  it('shows an error message example for each error code', () => {
    const exampleCodes = [...doc.matchAll(/"type":"error"[^\n]*?"code":"([a-z_]+)"/g)].map((m) => m[1]);
    expect(new Set(exampleCodes)).toEqual(new Set(errorCodes));
  });
});
