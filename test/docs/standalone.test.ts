/**
 * The repository's docs stand alone: no file cites a document a clone does not contain, and every
 * relative link of README.md and docs/*.md points at a file that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEXT = /\.(ts|js|md|json|ya?ml|html|css|py|toml)$|^(Dockerfile|run)$/;

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory())
      return ['node_modules', 'results', 'build', 'dist', '__pycache__'].includes(name)
        ? []
        : filesUnder(path);
    return TEXT.test(name) ? [path] : [];
  });
}

const files = [
  ...['src', 'docs', 'test', 'bench', 'bin', '.ci', 'clients', 'packages', 'deploy'].flatMap((folder) =>
    filesUnder(join(ROOT, folder)),
  ),
  join(ROOT, 'README.md'),
  join(ROOT, 'Dockerfile'),
];

describe('docs stand alone', () => {
  // Spelt in pieces so that this file does not cite them itself.
  const outside = [`upstream-api${'.md'}`, `interface${'.md'}`, `shared${'/'}`];

  it('no file cites a document outside the repository', () => {
    const citations = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          outside.some((name) => line.includes(name))
            ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(citations).toEqual([]);
  });

  it('every relative link of the docs points at a file that exists', () => {
    const docs = files.filter((file) => file.endsWith('.md'));
    const broken = docs.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(join(dirname(file), target)))
        .map((target) => `${relative(ROOT, file)} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
