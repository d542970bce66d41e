// One test run per checkout. A run's `before` starts the checkout's embedded PostgreSQL and S3
// server and its `after` stops them, so a second run started beside the first would stop the
// first one's servers under it (its tests then fail on lost connections, far from the cause).
// The run is the tap process (the parent of before.ts and after.ts); a second run is refused
// with the reason instead, and a lock left by a run that died is taken over.
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { isRunning, startTime, type ProcessId } from '../../src/db/embedded.ts';
import { runLockFile } from './paths.ts';

/** the tap process of a run, by pid and start time (a reused pid is not taken for it) */
type RunOwner = ProcessId;

function readOwner(): RunOwner | undefined {
  if (!existsSync(runLockFile)) return undefined;
  try {
    return JSON.parse(readFileSync(runLockFile, 'utf8')) as RunOwner;
  } catch {
    return undefined;
  }
}

const thisRun: RunOwner = { pid: process.ppid, start: startTime(process.ppid) };

/** before.ts: this run owns the checkout's test servers, or the run stops here saying why. */
export async function claimTestRun(): Promise<void> {
  const owner = readOwner();
  if (owner && owner.pid !== thisRun.pid && isRunning(owner)) {
    throw new Error(
      `another test run (tap, pid ${owner.pid}) is using this checkout's PostgreSQL and S3 ` +
        'server; starting a second one here would stop them under it. Wait for it to end, ' +
        'or run the tests in another checkout (git worktree add).',
    );
  }
  await writeFile(runLockFile, JSON.stringify(thisRun));
}

/** after.ts: whether this run owns the servers (a refused second run must not stop them). */
export function ownsTestRun(): boolean {
  const owner = readOwner();
  return !owner || owner.pid === thisRun.pid || !isRunning(owner);
}

export async function releaseTestRun(): Promise<void> {
  await rm(runLockFile, { force: true });
}
