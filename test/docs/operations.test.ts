/**
 * docs/operations.md's tables of options are made from the option specs of src/config/, the same
 * ones the flags, the environment twins and `--help` come from: each table between its
 * `<!-- options:NAME -->` markers must equal the generated one. `UPDATE_DOCS=1` writes them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/config/command-options.ts';
import { optionSections, optionsTable } from '../../src/config/options-table.ts';

const path = new URL('../../docs/operations.md', import.meta.url);

function markers(name: string): RegExp {
  return new RegExp(`(<!-- options:${name} [^>]*-->\\n)([\\s\\S]*?)(\\n<!-- /options:${name} -->)`);
}

if (process.env.UPDATE_DOCS === '1') {
  let doc = readFileSync(path, 'utf8');
  for (const name of Object.keys(optionSections)) {
    doc = doc.replace(markers(name), (_all, open: string, _table: string, close: string) => {
      return `${open}${optionsTable(name)}${close}`;
    });
  }
  writeFileSync(path, doc);
}

describe('docs/operations.md documents every option', () => {
  const doc = readFileSync(path, 'utf8');

  for (const name of Object.keys(optionSections)) {
    it(`its "${name}" table is the one the option specs make`, () => {
      const table = markers(name).exec(doc)?.[2];
      expect(table, `<!-- options:${name} --> markers`).toBeDefined();
      expect(table).toBe(optionsTable(name));
    });
  }

  it('lists every option of every command in exactly one table', () => {
    const listed = Object.values(optionSections).flat();
    expect(new Set(listed).size).toBe(listed.length);
    const options = new Set(Object.values(commands).flatMap((options) => Object.keys(options)));
    expect([...options].sort()).toEqual([...listed].sort());
  });
});
