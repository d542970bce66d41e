// A bench's measured run in a child process of its own, the object store in this one: as in
// production, the store's work is not done by the process measured (nor counted in its peak RSS).
import { spawn } from 'node:child_process';
import { startEmbeddedS3 } from '../../src/storage/embedded.ts';

export interface ChildRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bench script `scriptUrl` (its import.meta.url) as a child with `args`, its output collected (this event loop keeps running). */
function runChild(scriptUrl: string, args: string[]): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', new URL(scriptUrl).pathname, ...args],
      { env: process.env },
    );
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
 * `--s3 <its settings as JSON>`, and stops the store.
 */
export async function runChildWithStore(
  scriptUrl: string,
  s3Dir: string,
  args: string[],
): Promise<ChildRun> {
  const s3 = await startEmbeddedS3(s3Dir, 'bench');
  try {
    return await runChild(scriptUrl, [...args, '--s3', JSON.stringify(s3.settings)]);
  } finally {
    await s3.stop();
  }
}
