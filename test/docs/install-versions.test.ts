/**
 * The install steps the READMEs give name the release artefacts a build makes now: the client
 * tarball of `packages/client/package.json`'s version and the wheel of `clients/python/pyproject.toml`'s
 * (a README that names another version fails word for word).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const clientVersion = (JSON.parse(read('packages/client/package.json')) as { version: string }).version;
const pythonVersion = /^version = "([^"]+)"$/m.exec(read('clients/python/pyproject.toml'))?.[1];

/** Every version a text names in an artefact's file name. */
function namedVersions(text: string, artefact: RegExp): string[] {
  return [...text.matchAll(artefact)].map((match) => match[1]!);
}

describe('the install steps', () => {
  it('name the client tarball a build makes', () => {
    const tarball = /market-relay-client-(\d+\.\d+\.\d+)\.tgz/g;
    const named = ['README.md', 'packages/client/README.md', 'docs/client.md'].flatMap((path) =>
      namedVersions(read(path), tarball),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([clientVersion]));
  });

  it('name the wheel a build makes', () => {
    const wheel = /market_relay-(\d+\.\d+\.\d+)-py3-none-any\.whl/g;
    const named = ['README.md', 'clients/python/README.md', 'docs/client.md'].flatMap((path) =>
      namedVersions(read(path), wheel),
    );
    expect(pythonVersion).toBeDefined();
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([pythonVersion]));
  });
});
