// The build puts each compiled file in place by a rename (scripts/build.mjs replaceFile): a
// process that starts while `npm pack`, `npm install` or an admin command rebuilds dist/ reads a
// chunk whole, old or new, never one half written over (a module missing the exports its
// importers name). A file already holding the new bytes is not touched.
import { openSync, readSync, closeSync, statSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { repoRoot } from '../setup/paths.ts';

const { replaceFile } = (await import(
  pathToFileURL(path.join(repoRoot, 'scripts', 'build.mjs')).href
)) as { replaceFile: (file: string, contents: Uint8Array) => Promise<void> };

t.test('a changed file is a new file; an open one keeps its old bytes whole', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'build-replace-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'chunks', 'chunk-A.js');
  await replaceFile(file, Buffer.from('export const a = 1;\n'));
  t.equal(readFileSync(file, 'utf8'), 'export const a = 1;\n', 'made with its directory');
  const before = statSync(file).ino;
  const open = openSync(file, 'r');
  t.teardown(() => closeSync(open));
  const next = `export const a = 1;\nexport const b = ${'2'.repeat(100_000)};\n`;
  await replaceFile(file, Buffer.from(next));
  t.not(statSync(file).ino, before, 'renamed into place, not written over');
  const held = Buffer.alloc(100);
  const n = readSync(open, held, 0, 100, 0);
  t.equal(
    held.subarray(0, n).toString(),
    'export const a = 1;\n',
    'a reader of the old file reads it whole',
  );
  t.equal(readFileSync(file, 'utf8'), next);
  t.same(readdirSync(path.dirname(file)), ['chunk-A.js'], 'no temporary file left');
});

t.test('a file that already holds the bytes is left as it is', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'build-replace-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'main.js');
  await writeFile(file, 'same\n');
  const { ino, mtimeMs } = statSync(file);
  await new Promise((r) => setTimeout(r, 20));
  await replaceFile(file, Buffer.from('same\n'));
  t.equal(statSync(file).ino, ino);
  t.equal(statSync(file).mtimeMs, mtimeMs);
});
