// SIGINT and SIGTERM for the whole life of a process that starts something (the service roles and
// the admin commands): the first asks for a clean shutdown; one repeated while it runs (a second
// Ctrl-C, or tsx re-sending a signal its child did not acknowledge within 30 ms) is logged and
// ignored; two repeats within FORCE_WINDOW_MS of each other force an exit after a bounded best
// effort (the jobs this process holds released, the embedded PostgreSQL stopped unless another
// process uses it). Handlers stay installed until the process exits: with none, a late signal
// would kill it halfway through its shutdown.
import { constants } from 'node:os';
import type { Interruption } from '../runtime.ts';

type Signal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ShutdownOptions {
  log: Log;
  /** the level of the first signal's message: a service's shutdown is routine, an admin command's interruption is not */
  level?: 'info' | 'warn';
  /** signals closer than this to the one before are one (tsx's re-sent signal, a terminal's and a relay's) */
  coalesceMs?: number;
  /** a repeated signal this soon after the previous repeat forces an exit */
  forceWindowMs?: number;
  /** how long a forced exit's best effort may take */
  forceTimeoutMs?: number;
  /** process.exit, replaced by tests */
  exit?: (code: number) => void;
  /** Date.now, replaced by tests: the windows are about the time between signals */
  now?: () => number;
  /** where the signals come from: the process, or a test's emitter */
  source?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

export interface Shutdown extends Interruption {
  /** the first signal received */
  readonly received: Signal | undefined;
  /** 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM */
  exitCode(): number;
  /** resolves at the first signal */
  requested: Promise<Signal>;
  /** removes the handlers (tests) */
  dispose(): void;
}

export const COALESCE_MS = 250;
export const FORCE_WINDOW_MS = 3_000;
export const FORCE_TIMEOUT_MS = 15_000;

// SIGHUP: the terminal was closed (or the SSH session lost). Node's default would end the process
// at once, leaving the embedded PostgreSQL running and the running jobs locked; it stops cleanly
// instead. (Node resets an inherited SIG_IGN, so `nohup` never kept it running anyway.)
const SIGNALS: Signal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

let requestedInProcess = false;
let hungUp = false;

/** whether this process was asked to stop (by any handleSignals) */
export function shutdownRequested(): boolean {
  return requestedInProcess;
}

/**
 * Ends a process stopped by SIGHUP whose terminal is gone the way SIGHUP would have ended it,
 * once its shutdown is done: Node's exit restores the terminal's settings and, the terminal
 * being gone, aborts with an assertion (nodejs/node#51519) and a core dump.
 */
export function endHangup(): void {
  if (!hungUp || !(process.stdout.isTTY || process.stderr.isTTY || process.stdin.isTTY)) return;
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
}

/** Output errors (a closed terminal's EIO, a closed pipe's EPIPE) are dropped rather than thrown. */
function quietOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {});
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((...args: unknown[]) => {
      try {
        return write(...args);
      } catch {
        return false;
      }
    }) as typeof stream.write;
  }
}

/** The first signal, for the whole process: a hang-up's output quieted, the shutdown logged. */
function noteShutdown(signal: Signal, log: Log, level: 'info' | 'warn'): void {
  // the terminal is gone: writing to it fails (EIO), which must not end the shutdown half-way
  if (signal === 'SIGHUP') {
    hungUp = true;
    quietOutput();
  }
  requestedInProcess = true;
  log[level]({ signal }, 'shutting down');
}

/**
 * A forced exit: the releases are given forceTimeoutMs at most, then the process exits with the
 * signal's code. Returns what cancels that wait (a further signal exits at once).
 */
function forceExit(
  signal: Signal,
  releases: (() => Promise<void>)[],
  options: { log: Log; forceTimeoutMs: number; exit: (code: number) => void },
): () => void {
  const code = 128 + constants.signals[signal];
  options.log.error({ signal }, 'forced exit: releasing the running jobs, not waiting for them');
  let timer: NodeJS.Timeout | undefined;
  const work = Promise.allSettled(releases.map(async (release) => release()));
  const timeout = new Promise<void>(
    (resolve) => (timer = setTimeout(resolve, options.forceTimeoutMs)),
  );
  void Promise.race([work, timeout]).then(() => {
    clearTimeout(timer);
    options.exit(code);
  });
  return () => clearTimeout(timer);
}

export function handleSignals(options: ShutdownOptions): Shutdown {
  const {
    log,
    level = 'info',
    coalesceMs = COALESCE_MS,
    forceWindowMs = FORCE_WINDOW_MS,
    forceTimeoutMs = FORCE_TIMEOUT_MS,
  } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const clock = options.now ?? Date.now;
  const source = options.source ?? process;
  const controller = new AbortController();
  const releases: (() => Promise<void>)[] = [];
  let received: Signal | undefined;
  let resolveRequested: (signal: Signal) => void = () => {};
  const requested = new Promise<Signal>((resolve) => (resolveRequested = resolve));
  let last = 0;
  let lastRepeat = 0;
  /** set once an exit is forced: cancels the wait for the releases */
  let forcing: (() => void) | undefined;

  const onSignal = (signal: Signal) => {
    const now = clock();
    const coalesced = now - last < coalesceMs;
    last = now;
    if (received === undefined) {
      received = signal;
      noteShutdown(signal, log, level);
      controller.abort(signal);
      resolveRequested(signal);
      return;
    }
    if (coalesced) return;
    if (forcing) {
      // the best effort is taking long: one more and there is no waiting at all
      log.error({ signal }, 'exiting now');
      forcing();
      exit(128 + constants.signals[signal]);
      return;
    }
    if (lastRepeat > 0 && now - lastRepeat <= forceWindowMs) {
      forcing = forceExit(signal, releases, { log, forceTimeoutMs, exit });
      return;
    }
    lastRepeat = now;
    log.warn(
      { signal },
      `already shutting down (waiting for running work); signal ignored. Another within ${forceWindowMs / 1000} s forces an exit: running jobs are released for a later run`,
    );
  };
  const listeners = SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, listener] of listeners) source.on(signal, listener);

  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    requested,
    exitCode: () => (received ? 128 + constants.signals[received] : 0),
    onForce(release) {
      releases.push(release);
    },
    dispose() {
      for (const [signal, listener] of listeners) source.off(signal, listener);
    },
  };
}
