// A bench's measured run in a child process of its own, the object store in this one: as in
// production, the store's work is not done by the process measured (nor counted in its peak RSS).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { startEmbeddedS3 } from '../../src/storage/embedded.ts';
import { repoRoot } from '../setup/paths.ts';

export interface ChildRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The bench script compiled as the service is: the service built (scripts/build.mjs, when stale)
 * and the script bundled by esbuild into dist/bench/<name>.mjs, where the service's code it
 * imports runs as plain JavaScript and its worker threads load dist/workers/ (src/paths.ts), as
 * `npm run worker` runs them. Its path.
 */
async function compiledScript(scriptUrl: string): Promise<string> {
  const built = spawnSync(
    process.execPath,
    [path.join(repoRoot, 'scripts', 'build.mjs'), '--if-stale'],
    {
      stdio: 'inherit',
    },
  );
  if (built.status !== 0) throw new Error('the build failed');
  const source = new URL(scriptUrl).pathname;
  // dist/bench/ lies as deep as test/bench/: the script's relative paths hold
  const outfile = path.join(repoRoot, 'dist', 'bench', `${path.basename(source, '.ts')}.mjs`);
  const { build } = await import('esbuild');
  await build({
    entryPoints: [source],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * Runs the bench script `scriptUrl` (its import.meta.url) as a child with `args`, its output
 * collected (this event loop keeps running): compiled (compiledScript), or from source through tsx.
 */
async function runChild(scriptUrl: string, args: string[], compiled: boolean): Promise<ChildRun> {
  const command = compiled
    ? [await compiledScript(scriptUrl)]
    : ['--import', 'tsx', new URL(scriptUrl).pathname];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...command, ...args], { env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Starts an object store (bucket `bench`, its files in `s3Dir`), runs the child with `args` and
 * `--s3 <its settings as JSON>` (`compiled`: as compiledScript makes it), and stops the store.
 */
export async function runChildWithStore(
  scriptUrl: string,
  s3Dir: string,
  args: string[],
  { compiled = false } = {},
): Promise<ChildRun> {
  const s3 = await startEmbeddedS3(s3Dir, 'bench');
  try {
    return await runChild(scriptUrl, [...args, '--s3', JSON.stringify(s3.settings)], compiled);
  } finally {
    await s3.stop();
  }
}
