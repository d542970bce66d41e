// The signal policy of every command (src/cli/signals.ts), on an emitter standing for the process:
// the first signal asks for a shutdown, a repeat is ignored, two repeats within the window force
// an exit after the registered best effort (bounded in time), and a signal re-sent at once (tsx's
// relay of a signal its child did not acknowledge within 30 ms) counts as the same one.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { handleSignals } from '../../src/cli/signals.ts';

// The windows are read on a clock the test moves (a loaded machine may pause the process for
// longer than a window between two lines); the best effort's time limit is a real timer.
function harness(opts: { forceWindowMs?: number; forceTimeoutMs?: number } = {}) {
  const source = new EventEmitter();
  let clock = 1_000_000;
  const advance = (ms: number) => (clock += ms);
  const logged: { level: string; msg: string }[] = [];
  const log = {
    info: (_: object, msg: string) => logged.push({ level: 'info', msg }),
    warn: (_: object, msg: string) => logged.push({ level: 'warn', msg }),
    error: (_: object, msg: string) => logged.push({ level: 'error', msg }),
  };
  const exits: number[] = [];
  const shutdown = handleSignals({
    log,
    source,
    coalesceMs: 50,
    forceWindowMs: opts.forceWindowMs ?? 500,
    forceTimeoutMs: opts.forceTimeoutMs ?? 2000,
    exit: (c) => exits.push(c),
    now: () => clock,
  });
  return { source, logged, exits, shutdown, advance };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (real time, at most 10 s) until the harness has exited. */
async function exited(exits: number[]): Promise<number[]> {
  for (let waited = 0; exits.length === 0 && waited < 10_000; waited += 10) await sleep(10);
  return exits;
}

t.test('the first signal asks for a shutdown; repeats are logged and ignored', async (t) => {
  const { source, logged, exits, shutdown, advance } = harness();
  t.equal(shutdown.signal.aborted, false);
  t.equal(shutdown.exitCode(), 0);
  source.emit('SIGTERM');
  t.equal(await shutdown.requested, 'SIGTERM');
  t.equal(shutdown.signal.aborted, true);
  t.equal(shutdown.exitCode(), 143);
  source.emit('SIGTERM'); // re-sent at once: the same signal
  t.equal(logged.length, 1);
  advance(100);
  source.emit('SIGINT');
  advance(600); // past the window: the next one is a first repeat again
  source.emit('SIGINT');
  t.same(
    logged.map((l) => l.level),
    ['info', 'warn', 'warn'],
  );
  t.match(logged[1]!.msg, /already shutting down/);
  t.same(exits, [], 'never forced');
  t.equal(shutdown.exitCode(), 143, 'the first signal decides the exit code');
});

t.test('two repeats within the window force an exit after the best effort', async (t) => {
  const { source, logged, exits, shutdown, advance } = harness();
  const done: string[] = [];
  shutdown.onForce(async () => {
    await sleep(50);
    done.push('released');
  });
  source.emit('SIGINT');
  advance(100);
  source.emit('SIGINT');
  source.emit('SIGINT'); // tsx's relay of the same Ctrl-C: not a third
  t.same(exits, []);
  advance(100);
  source.emit('SIGINT');
  t.match(logged.at(-1)!.msg, /forced exit/);
  t.same(await exited(exits), [130]);
  t.same(done, ['released'], 'the best effort ran before the exit');
});

t.test(
  'a forced exit does not wait longer than its limit, nor after one more signal',
  async (t) => {
    const slow = harness({ forceTimeoutMs: 200 });
    slow.shutdown.onForce(() => new Promise(() => {}));
    const started = Date.now();
    for (const wait of [100, 100, 0]) {
      slow.source.emit('SIGINT');
      slow.advance(wait);
    }
    t.same(slow.exits, []);
    t.same(await exited(slow.exits), [130], 'exits at the limit');
    t.ok(Date.now() - started >= 190, 'not before it');

    const impatient = harness({ forceTimeoutMs: 10_000 });
    impatient.shutdown.onForce(() => new Promise(() => {}));
    for (const wait of [100, 100, 100]) {
      impatient.source.emit('SIGTERM');
      impatient.advance(wait);
    }
    impatient.source.emit('SIGTERM');
    t.same(impatient.exits, [143], 'one more signal: at once');
  },
);
