// Compiles the service into dist/: `npm start` and the admin commands run plain JavaScript, with
// no TypeScript loader (and none of its child processes) at run time. esbuild bundles the entry
// points (the command line, each worker thread file, the analytics sandbox); packages stay in
// node_modules, shared code goes into chunks, and nothing is minified, so stack traces stay
// readable. Type checking is `npm run typecheck`'s job, not this one's.
//
//   node scripts/build.mjs             build (npm run build; `npm install` runs it as `prepare`)
//   node scripts/build.mjs --if-stale  build only when a source file is newer than the build, or
//                                      the entry points changed (npm start, npm run admin, tests)
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist');
/** what the last build read (esbuild's metafile inputs) and its entry points */
const manifestFile = path.join(outdir, 'build-inputs.json');

async function entryPoints() {
  // every workers/*.ts is a thread or process entry, or a module they share
  const workers = (await readdir(path.join(root, 'workers')))
    .filter((f) => f.endsWith('.ts'))
    .sort();
  // the command-line client (bin/royalty.mjs) and the client library (the package's ./client)
  return [
    'src/main.ts',
    'src/royalty/main.ts',
    'src/client/index.ts',
    ...workers.map((f) => `workers/${f}`),
  ];
}

async function isStale(entries) {
  let manifest;
  try {
    manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
  } catch {
    return true;
  }
  if (JSON.stringify(manifest.entries) !== JSON.stringify(entries)) return true;
  const built = (await stat(manifestFile)).mtimeMs;
  for (const input of [...manifest.inputs, 'scripts/build.mjs', 'package.json']) {
    const changed = await stat(path.join(root, input)).then(
      (s) => s.mtimeMs > built,
      () => true,
    );
    if (changed) return true;
  }
  return false;
}

/** Builds dist/; with `ifStale`, only when a source file is newer than the last build. */
export async function buildService({ ifStale = false } = {}) {
  const entries = await entryPoints();
  if (ifStale && !(await isStale(entries))) return;
  await bundle(entries);
}

async function bundle(entries) {
  const { build } = await import('esbuild');
  // written over the last build, never removed first: a service started from it may still load its
  // chunks (lazily imported modules, new worker threads) while an admin command rebuilds
  const result = await build({
    write: false,
    absWorkingDir: root,
    entryPoints: entries,
    outdir,
    outbase: '.',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    metafile: true,
    logLevel: 'warning',
  });
  for (const file of result.outputFiles) await replaceFile(file.path, file.contents);
  const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'));
  await writeFile(manifestFile, JSON.stringify({ entries, inputs }));

  // chunks of earlier builds, once no process started a day ago can still want them
  const current = new Set(Object.keys(result.metafile.outputs).map((f) => path.resolve(root, f)));
  const chunks = path.join(outdir, 'chunks');
  for (const name of await readdir(chunks)) {
    const file = path.join(chunks, name);
    if (!current.has(file) && (await stat(file)).mtimeMs < Date.now() - 86_400_000)
      await rm(file, { force: true });
  }
}

/**
 * Puts a built file in place by a rename, never by writing over it: a process starting meanwhile
 * (a service, an admin command, another build's reader) reads the old file or the new one whole,
 * not one half written (which Node reports as a module without the exports its importers name).
 * A file whose bytes are already these is left as it is.
 */
export async function replaceFile(file, contents) {
  const current = await readFile(file).catch(() => undefined);
  if (current && Buffer.compare(current, contents) === 0) return;
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, file);
}

// run as a command (npm run build, prepare, the npm scripts' --if-stale)
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildService({ ifStale: process.argv.includes('--if-stale') });
}
