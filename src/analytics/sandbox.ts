// Runs cube.sqlQuery statements in sandbox processes (workers/analyticsSandbox.ts), one process
// per statement. A process is started ahead of need so a call does not wait for it; it gets a
// clean environment, and is killed when it outlives its time or its memory: DuckDB's
// memory_limit does not cover every allocation (a long string built by repeat() is outside it),
// and killing a process, unlike aborting a thread running DuckDB, takes nothing else down.
// Only a few statements run at once (sandboxSlots): each process may grow to its memory limit
// plus the baseline, so without a bound a burst of calls could take the machine's memory; the
// others wait their turn, the organization with the fewest running first, and an organization
// cannot have more than MAX_PER_ORGANIZATION of them running or waiting.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { AppError } from '../errors.ts';
import { fileURLToPath } from 'node:url';
import type { SandboxJob, SandboxResult } from '../../workers/analyticsSandbox.ts';

export interface SandboxSettings {
  threads: number;
  memoryMb: number;
  timeoutMs: number;
  maxRows: number;
  /** the most an answer may weigh, counted as its JSON text roughly is (analyticsSandbox.ts, resultBytes) */
  maxResultMb: number;
}

const WORKER = fileURLToPath(new URL('../../workers/analyticsSandbox.ts', import.meta.url));
// only the TypeScript loader: whatever else the parent was started with (test harness hooks,
// inspectors) has no business in a sandbox and slows its start
const EXEC_ARGV = ['--import', import.meta.resolve('tsx')];
/** Node and the module loader take about this much resident memory before DuckDB does anything. */
const PROCESS_BASELINE_MB = 384;
const WATCH_INTERVAL_MS = 20;
const SPARE_IDLE_MS = 60_000;
const PAGE_SIZE = 4096;
/** Statements of one organization running or waiting at once, in one process; more are refused. */
export const MAX_PER_ORGANIZATION = 8;
/** Statements waiting for a slot, all organizations together, in one process; more are refused. */
const MAX_WAITING = 64;

/**
 * How many sandboxes run at once: one a core, and no more than half the machine's (or container's) memory allows
 * at their limit (CUBE_SQL_MEMORY_MB plus the process baseline), at least one.
 */
export function sandboxSlots(settings: Pick<SandboxSettings, 'memoryMb'>): number {
  // a container's memory limit (cgroup) when it is lower than the machine's
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  const byMemory = Math.floor(memory / 1_048_576 / 2 / (settings.memoryMb + PROCESS_BASELINE_MB));
  return Math.max(1, Math.min(availableParallelism(), byMemory));
}

interface Waiter {
  organizationId: string;
  start: () => void;
}

function residentMb(pid: number): number | undefined {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return (pages * PAGE_SIZE) / 1_048_576;
  } catch {
    return undefined;
  }
}

export class SandboxPool {
  private spare: Promise<ChildProcess> | undefined;
  private spareTimer: NodeJS.Timeout | undefined;
  private readonly children = new Set<ChildProcess>();
  private closed = false;
  private readonly slots: number;
  private running = 0;
  /** statements running or waiting, per organization */
  private readonly perOrganization = new Map<string, { running: number; held: number }>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly settings: SandboxSettings) {
    this.slots = sandboxSlots(settings);
  }

  /**
   * Runs `work` (writing the caller's rows and running the statement) when a slot is free; the
   * rows are written only then, so waiting statements hold no scratch files. Refuses with
   * SQL_QUERY_RESOURCE_LIMIT when the organization already has MAX_PER_ORGANIZATION statements
   * running or waiting, or too many statements wait.
   */
  async withSlot<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the sandbox pool is closed');
    const org = this.perOrganization.get(organizationId) ?? { running: 0, held: 0 };
    if (org.held >= MAX_PER_ORGANIZATION) {
      throw new AppError(
        'SQL_QUERY_RESOURCE_LIMIT',
        `${MAX_PER_ORGANIZATION} SQL statements of this organization are already running or waiting; wait for their answers before sending more`,
      );
    }
    if (this.running >= this.slots && this.waiting.length >= MAX_WAITING) {
      throw new AppError('SQL_QUERY_RESOURCE_LIMIT', 'Too many SQL statements are waiting to run; try again shortly');
    }
    org.held += 1;
    this.perOrganization.set(organizationId, org);
    try {
      if (this.running >= this.slots) await new Promise<void>((start) => this.waiting.push({ organizationId, start }));
      else this.running += 1;
      org.running += 1;
      try {
        return await work();
      } finally {
        org.running -= 1;
        this.release();
      }
    } finally {
      org.held -= 1;
      if (org.held === 0) this.perOrganization.delete(organizationId);
    }
  }

  /** Hands the freed slot to the waiter whose organization runs the fewest statements (first come first among equals). */
  private release(): void {
    let best = -1;
    let fewest = Infinity;
    this.waiting.forEach((w, i) => {
      const n = this.perOrganization.get(w.organizationId)?.running ?? 0;
      if (n < fewest) {
        fewest = n;
        best = i;
      }
    });
    if (best < 0) {
      this.running -= 1;
      return;
    }
    // the slot passes on: running stays as it is
    const [next] = this.waiting.splice(best, 1);
    next!.start();
  }

  private spawn(): Promise<ChildProcess> {
    const child = fork(WORKER, [], {
      // the environment, with its secrets, stays behind
      execArgv: EXEC_ARGV,
      env: {},
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the sandbox process ended before it was ready (${code})`));
      child.once('exit', onExit);
      child.once('message', () => {
        child.off('exit', onExit);
        resolve(child);
      });
    });
  }

  private takeProcess(): Promise<ChildProcess> {
    const ready = this.spare ?? this.spawn();
    this.spare = this.spawn();
    this.spare.catch(() => (this.spare = undefined));
    clearTimeout(this.spareTimer);
    // an unused spare is not kept forever
    this.spareTimer = setTimeout(() => {
      const spare = this.spare;
      this.spare = undefined;
      void spare?.then((c) => c.kill('SIGKILL')).catch(() => {});
    }, SPARE_IDLE_MS).unref();
    return ready;
  }

  async run(file: string, sql: string): Promise<SandboxResult> {
    if (this.closed) throw new Error('the sandbox pool is closed');
    const child = await this.takeProcess();
    const job: SandboxJob = { file, sql, ...this.settings };
    const limitMb = this.settings.memoryMb + PROCESS_BASELINE_MB;
    let watch: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    try {
      return await new Promise<SandboxResult>((resolve) => {
        watch = setInterval(() => {
          const rss = child.pid === undefined ? undefined : residentMb(child.pid);
          if (rss !== undefined && rss > limitMb) {
            child.kill('SIGKILL');
            resolve({ ok: false, errorCode: 'SQL_QUERY_RESOURCE_LIMIT', message: `The statement needed more than ${this.settings.memoryMb} MB of memory` });
          }
        }, WATCH_INTERVAL_MS);
        // the process interrupts itself at timeoutMs; this is for a process that cannot
        deadline = setTimeout(() => {
          child.kill('SIGKILL');
          resolve({ ok: false, errorCode: 'SQL_QUERY_TIMEOUT', message: `The statement ran longer than ${this.settings.timeoutMs} ms` });
        }, this.settings.timeoutMs + 5_000);
        child.once('message', (result: SandboxResult) => resolve(result));
        child.once('exit', (code, signal) =>
          resolve({ ok: false, errorCode: 'SQL_QUERY_RESOURCE_LIMIT', message: `The sandbox process ended without an answer (${signal ?? code})` }),
        );
        child.send(job);
      });
    } finally {
      clearInterval(watch);
      clearTimeout(deadline);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.spareTimer);
    for (const child of this.children) child.kill('SIGKILL');
    this.children.clear();
    this.spare = undefined;
    // waiting statements go on to find the pool closed (run refuses)
    for (const w of this.waiting.splice(0)) w.start();
  }
}
