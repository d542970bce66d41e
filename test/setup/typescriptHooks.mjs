// The module hooks of test/setup/typescript.mjs: a `.ts` module is compiled by esbuild (types
// removed, nothing else changed) and the result kept in node_modules/.cache/test-typescript, by
// a hash of the source, so a test run compiles only what changed; every other module is left to
// Node untouched.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cacheDir = fileURLToPath(
  new URL('../../node_modules/.cache/test-typescript/', import.meta.url),
);
mkdirSync(cacheDir, { recursive: true });
/** esbuild, started on the first module not in the cache */
let esbuild;

async function compile(file, source) {
  esbuild ??= import('esbuild');
  const { code } = await (
    await esbuild
  ).transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    // Node 20 reads `with { type: 'json' }` (esbuild would drop it for node20)
    supported: { 'import-attributes': true },
    sourcefile: file,
    sourcemap: 'inline',
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  });
  return code;
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = await readFile(file, 'utf8');
  const cached = path.join(
    cacheDir,
    createHash('sha1').update(file).update('\0').update(source).digest('hex') + '.js',
  );
  let code = await readFile(cached, 'utf8').catch(() => undefined);
  if (code === undefined) {
    code = await compile(file, source);
    // written whole or not at all: another test file may be reading it
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await writeFile(partial, code);
    await rename(partial, cached);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
