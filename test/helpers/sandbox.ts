// The cube.sqlQuery sandbox processes (workers/analyticsSandbox.ts) a test server running in this
// process has started, read from /proc, and the analytics database files it holds open.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The pids of this process's sandbox processes, the idle spare included. */
export function sandboxPids(): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('analyticsSandbox')) continue;
      // stat: pid (comm) state ppid ...; comm has no spaces here (node)
      if (readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[3] === String(process.pid))
        pids.push(Number(pid));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/** How many descriptors of this process have the file open. */
export function openDescriptors(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Polls until `done` holds (every 10 ms), failing after `ms`. */
export async function until(what: string, done: () => boolean, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
