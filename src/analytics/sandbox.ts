// Runs cube.sqlQuery statements in sandbox processes (workers/analyticsSandbox.ts), one process
// per statement. A process is started ahead of need so a call does not wait for it; it gets a
// clean environment, and is killed when it outlives its time or its memory: DuckDB's
// memory_limit does not cover every allocation (a long string built by repeat() is outside it),
// and killing a process, unlike aborting a thread running DuckDB, takes nothing else down.
// Only a few statements run at once (sandboxSlots): each process may grow to its memory limit
// plus the baseline, so without a bound a burst of calls could take the machine's memory; the
// others wait their turn, the organization with the fewest running first, and an organization
// cannot have more than MAX_PER_ORGANIZATION of them running or waiting (SQL_QUERY_BUSY: the
// statement is fine, it may be sent again). A process that ends without an answer when it was
// not killed for its time or memory crashed: INTERNAL_ERROR, logged, and retryable.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { AppError } from '../errors.ts';
import { fromSource, workerModule } from '../paths.ts';
import type { SandboxJob, SandboxResult } from '../workers/sandboxTypes.ts';

export interface SandboxSettings {
  threads: number;
  memoryMb: number;
  timeoutMs: number;
  maxRows: number;
  /** the most an answer may weigh, counted as its JSON text roughly is (analyticsSandbox.ts, resultBytes) */
  maxResultMb: number;
  /** sandboxes running at once (CUBE_SQL_CONCURRENCY); undefined: sandboxSlots decides */
  concurrency?: number | undefined;
}

interface Log {
  error(obj: object, msg: string): void;
}

const WORKER = workerModule('analyticsSandbox');
// at most the TypeScript loader (when running from source): whatever else the parent was started
// with (test harness hooks, inspectors) has no business in a sandbox and slows its start
const EXEC_ARGV = fromSource ? ['--import', import.meta.resolve('tsx')] : [];
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
 * How many sandboxes run at once: CUBE_SQL_CONCURRENCY when it is set; else one a core, and no
 * more than half the machine's (or container's) memory allows at their limit (CUBE_SQL_MEMORY_MB
 * plus the process baseline), at least one.
 */
export function sandboxSlots(settings: Pick<SandboxSettings, 'memoryMb' | 'concurrency'>): number {
  if (settings.concurrency !== undefined) return settings.concurrency;
  // a container's memory limit (cgroup) when it is lower than the machine's
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  const byMemory = Math.floor(memory / 1_048_576 / 2 / (settings.memoryMb + PROCESS_BASELINE_MB));
  return Math.max(1, Math.min(availableParallelism(), byMemory));
}

interface Waiter {
  organizationId: string;
  start: () => void;
  refuse: (error: Error) => void;
}

const shutDown = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The SQL sandbox is shut down; send the statement again');

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
  /** the processes a statement was sent to, until they answer or end */
  private readonly busy = new Set<ChildProcess>();
  private closed = false;
  private readonly slots: number;
  private running = 0;
  /** statements running or waiting, per organization */
  private readonly perOrganization = new Map<string, { running: number; held: number }>();
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly settings: SandboxSettings,
    private readonly log: Log,
  ) {
    this.slots = sandboxSlots(settings);
  }

  /**
   * What runs and waits now, for tests and diagnostics: slots taken (a statement writing its
   * rows holds one too), statements waiting, sandbox processes (the spare included) and the ids
   * of those a statement was sent to.
   */
  stats(): {
    slots: number;
    running: number;
    waiting: number;
    processes: number;
    statementPids: number[];
  } {
    const statementPids = [...this.busy].map((c) => c.pid!);
    return {
      slots: this.slots,
      running: this.running,
      waiting: this.waiting.length,
      processes: this.children.size,
      statementPids,
    };
  }

  /**
   * Runs `work` (writing the caller's rows and running the statement) when a slot is free; the
   * rows are written only then, so waiting statements hold no scratch files. Refuses with
   * SQL_QUERY_BUSY when the organization already has MAX_PER_ORGANIZATION statements running or
   * waiting, or too many statements wait; with SERVICE_UNAVAILABLE once the pool is closed
   * (statements waiting then are refused so too, and never run).
   */
  async withSlot<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
    if (this.closed) throw shutDown();
    const org = this.perOrganization.get(organizationId) ?? { running: 0, held: 0 };
    if (org.held >= MAX_PER_ORGANIZATION) {
      throw new AppError(
        'SQL_QUERY_BUSY',
        `${MAX_PER_ORGANIZATION} SQL statements of this organization are already running or waiting; send this one again when one of them has its answer`,
      );
    }
    if (this.running >= this.slots && this.waiting.length >= MAX_WAITING) {
      throw new AppError(
        'SQL_QUERY_BUSY',
        `${MAX_WAITING} SQL statements are already waiting to run; send this one again shortly`,
      );
    }
    org.held += 1;
    this.perOrganization.set(organizationId, org);
    try {
      if (this.running >= this.slots)
        await new Promise<void>((start, refuse) =>
          this.waiting.push({ organizationId, start, refuse }),
        );
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
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.closed) return reject(shutDown());
        const cause = new Error(
          `the sandbox process ended before it was ready (${signal ?? `exit code ${code}`})`,
        );
        reject(
          new AppError(
            'INTERNAL_ERROR',
            'The SQL sandbox process did not start; send the statement again',
            { cause },
          ),
        );
      };
      child.once('exit', onExit);
      child.once('message', () => {
        child.off('exit', onExit);
        resolve(child);
      });
    });
  }

  private async takeProcess(): Promise<ChildProcess> {
    const spare = this.spare;
    const next = this.spawn();
    this.spare = next;
    next.catch(() => {
      if (this.spare === next) this.spare = undefined;
    });
    clearTimeout(this.spareTimer);
    // an unused spare is not kept forever
    this.spareTimer = setTimeout(() => {
      const spare = this.spare;
      this.spare = undefined;
      void spare?.then((c) => c.kill('SIGKILL')).catch(() => {});
    }, SPARE_IDLE_MS).unref();
    const child = await spare?.catch(() => undefined);
    if (this.closed) throw shutDown();
    // a spare that ended while it waited (killed, crashed) is of no use: a fresh process instead
    return child && child.exitCode === null && child.signalCode === null && child.connected
      ? child
      : this.spawn();
  }

  async run(file: string, sql: string): Promise<SandboxResult> {
    if (this.closed) throw shutDown();
    const child = await this.takeProcess();
    const { threads, memoryMb, timeoutMs, maxRows, maxResultMb } = this.settings;
    const job: SandboxJob = { file, sql, threads, memoryMb, timeoutMs, maxRows, maxResultMb };
    const limitMb = memoryMb + PROCESS_BASELINE_MB;
    let watch: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    let settled = false;
    try {
      return await new Promise<SandboxResult>((resolve, reject) => {
        const answer = (result: SandboxResult) => {
          settled = true;
          resolve(result);
        };
        watch = setInterval(() => {
          const rss = child.pid === undefined ? undefined : residentMb(child.pid);
          if (rss !== undefined && rss > limitMb) {
            child.kill('SIGKILL');
            answer({
              ok: false,
              errorCode: 'SQL_QUERY_RESOURCE_LIMIT',
              message: `The statement needed more than ${memoryMb} MB of memory`,
            });
          }
        }, WATCH_INTERVAL_MS);
        // the process interrupts itself at timeoutMs; this is for a process that cannot
        deadline = setTimeout(() => {
          child.kill('SIGKILL');
          answer({
            ok: false,
            errorCode: 'SQL_QUERY_TIMEOUT',
            message: `The statement ran longer than ${timeoutMs} ms`,
          });
        }, timeoutMs + 5_000);
        child.once('message', answer);
        // the process ended before it answered and before it was killed for its memory or time:
        // it crashed (or the pool closed), which says nothing about the statement: send it again
        const ended = (code: number | null, signal: NodeJS.Signals | null) => {
          if (settled) return;
          settled = true;
          if (this.closed) return reject(shutDown());
          const cause = new Error(
            `the sandbox process ${child.pid} ended without an answer (${signal ?? `exit code ${code}`})`,
          );
          this.log.error(
            { err: cause, pid: child.pid, code, signal },
            'cube.sqlQuery: the sandbox process crashed',
          );
          reject(
            new AppError(
              'INTERNAL_ERROR',
              'The SQL sandbox process ended unexpectedly; send the statement again',
              { cause },
            ),
          );
        };
        child.once('exit', ended);
        this.busy.add(child);
        child.send(job, (error) => {
          if (error) ended(child.exitCode, child.signalCode);
        });
      });
    } finally {
      this.busy.delete(child);
      clearInterval(watch);
      clearTimeout(deadline);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  /**
   * Kills every sandbox process (the running statements are answered SERVICE_UNAVAILABLE when
   * their process ends) and refuses the waiting statements: they never take a slot.
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.spareTimer);
    for (const child of this.children) child.kill('SIGKILL');
    this.spare = undefined;
    for (const w of this.waiting.splice(0)) w.refuse(shutDown());
  }
}
