// Closing the thread pool (the service stopping, its shutdown grace period over, a test's
// teardown) while DuckDB runs a query in one of its threads: the query is interrupted and its task
// ends with SERVICE_UNAVAILABLE (a job retried), a queued task is refused the same way, and only
// then do the threads end. Before, piscina ended the thread in the middle of the query and the
// whole process aborted: `terminate called after throwing an instance of 'Napi::Error'` (SIGABRT).
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { AppError } from '../../src/errors.ts';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import { startTestServer } from '../helpers/server.ts';
import { launcher, serviceEnv, until } from './processes.ts';

// (a worker module of this test's own: entry.mjs loads workers/<module>.ts)
const SLOW = '../test/runtime/duckdbWorker';

t.test(
  'a running DuckDB query is interrupted, a queued task refused, and the process lives on',
  async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-threads-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const pool = createThreadPool({
      maxThreads: 1,
      maxQueue: 8,
      idleTimeoutMs: 60_000,
      maxOldGenerationMb: 256,
      warm: 0,
    });
    const startedFile = path.join(dir, 'started');
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => 'completed',
        (error: unknown) => error,
      );
    const running = outcome(pool.runInModule(SLOW, 'slowQuery', { startedFile }));
    const queued = outcome(
      pool.runInModule(SLOW, 'slowQuery', { startedFile: path.join(dir, 'never') }),
    );
    await until('the query runs in its thread', () => existsSync(startedFile), 60_000);

    const asked = Date.now();
    await pool.close();
    const took = Date.now() - asked;
    const [first, second] = await Promise.all([running, queued]);
    t.ok(first instanceof AppError, 'the running task failed');
    t.equal((first as AppError).errorCode, 'SERVICE_UNAVAILABLE', 'as a retryable failure');
    t.ok(second instanceof AppError, 'the queued task was refused');
    t.equal((second as AppError).errorCode, 'SERVICE_UNAVAILABLE');
    t.notOk(existsSync(path.join(dir, 'never')), 'and never ran');
    t.ok(took < 5_000, `closed in ${took} ms`);
    t.equal(pool.close(), pool.close(), 'closing again returns the same promise');
    await t.rejects(
      pool.runInModule(SLOW, 'slowQuery', { startedFile }),
      { name: 'AppError', errorCode: 'SERVICE_UNAVAILABLE' },
      'a closed pool takes nothing',
    );
  },
);

t.test(
  'a process giving up its work (grace period over, forced exit) stops DuckDB before it exits',
  async (t) => {
    const srv = await startTestServer(t);
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-threads-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const startedFile = path.join(dir, 'started');
    const child = launcher(t)([startedFile], serviceEnv(srv.config), [
      process.execPath,
      '--import',
      'tsx',
      'test/runtime/abandonChild.ts',
    ]);
    const exit = await child.exited;
    t.same(exit, { code: 0, signal: null }, 'exits 0, not aborted');
    if (exit.code !== 0) t.comment(child.output());
    t.match(child.stdout(), /abandoned/);
    t.equal(
      readFileSync(`${startedFile}.outcome`, 'utf8'),
      'SERVICE_UNAVAILABLE',
      'the query was interrupted, its task failed to be retried',
    );
  },
);
