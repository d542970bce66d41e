// cube.sqlQuery and the engine's lifecycle: a statement waiting for its sandbox slot holds its
// organization's database open against the idle sweep, a sandbox process that crashes is a
// retryable INTERNAL_ERROR (not a resource limit of the statement), and closing the engine
// answers every running and waiting statement and leaves no sandbox process behind.
// CUBE_SQL_CONCURRENCY=1: one statement runs, the next one waits.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { analyticsFor, closeAnalytics } from '../../../src/analytics/engine.ts';
import { sandboxSlots } from '../../../src/analytics/sandbox.ts';
import { loadConfig } from '../../../src/config.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { openDescriptors, sandboxPids, until } from '../../helpers/sandbox.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, {
  env: { CUBE_SQL_TIMEOUT_MS: '3000', CUBE_SQL_MEMORY_MB: '128', CUBE_SQL_CONCURRENCY: '1' },
});
const a = await newOrganization(srv, 'Lifecycle Org');
await seedDataset(srv, a.organizationId);
const b = await newOrganization(srv, 'Other Lifecycle Org');
await seedDataset(srv, b.organizationId, 'B ');

const run = (caller: typeof a, text: string) =>
  caller.client.mutate('cube.sqlQuery', { organizationId: caller.organizationId, sql: text });
// distinct statements (the same text would share one run) that run until interrupted
const slow = (i: number) => `SELECT count(*) FROM range(1000000000000) r WHERE r.range <> ${i}`;
const COUNT = 'SELECT count(*) FROM analytics_full_view';
const counted = { schema: [{ name: 'count_star()', column_type: 'BIGINT' }], rows: [['7']] };
const engine = () => analyticsFor(srv.deps);
const orgDir = (caller: typeof a) => path.join(srv.config.analytics.dir, caller.organizationId);
const factsOpen = (caller: typeof a) => openDescriptors(path.join(orgDir(caller), 'facts.duckdb'));

t.test(
  'CUBE_SQL_CONCURRENCY: whole number 1 to 256; unset, one a core within half the memory',
  async (t) => {
    t.equal(loadConfig({}).analytics.sql.concurrency, undefined);
    t.equal(loadConfig({ CUBE_SQL_CONCURRENCY: '' }).analytics.sql.concurrency, undefined);
    t.equal(loadConfig({ CUBE_SQL_CONCURRENCY: '3' }).analytics.sql.concurrency, 3);
    for (const bad of ['0', '257', '1.5', 'two'])
      t.throws(() => loadConfig({ CUBE_SQL_CONCURRENCY: bad }), /CUBE_SQL_CONCURRENCY/, bad);
    t.equal(sandboxSlots({ memoryMb: 128, concurrency: 3 }), 3);
    t.equal(engine().sandboxStats().slots, 1);
  },
);

t.test(
  'a statement waiting for its slot keeps its database open through the idle sweep',
  async (t) => {
    t.same((await run(a, 'SELECT 1')).data?.rows, [[1]], 'the database is built');
    const first = run(a, slow(1));
    await until('the first statement to run', () => engine().sandboxStats().running === 1);
    const second = run(a, COUNT);
    await until('the second statement to wait', () => engine().sandboxStats().waiting === 1);
    t.equal(factsOpen(a), 1, 'the database is open');
    engine().closeIdle(0);
    t.equal(factsOpen(a), 1, 'the sweep left the database of a waiting statement open');
    t.equal((await first).error?.data.errorCode, 'SQL_QUERY_TIMEOUT');
    t.same((await second).data, counted);
    // nothing is held any more: the sweep closes the database, and no instance of it is left open
    engine().closeIdle(0);
    t.equal(factsOpen(a), 0, 'no instance of the database is left open');
    t.same((await run(a, 'SELECT count(*) + 1 FROM analytics_full_view')).data?.rows, [['8']]);
    t.same(
      readdirSync(orgDir(a)).filter((f) => /^facts-.*\.duckdb$/.test(f)),
      [],
      'the next query opened the database itself, not a private copy beside a leaked instance',
    );
    t.equal(factsOpen(a), 1);
  },
);

t.test(
  'a sandbox process that crashes is a retryable INTERNAL_ERROR, logged; the next statement runs',
  async (t) => {
    const errors = t.capture(srv.deps.log, 'error');
    const running = run(a, slow(2));
    await until(
      'the statement to be sent to its process',
      () => engine().sandboxStats().statementPids.length === 1,
    );
    const [pid] = engine().sandboxStats().statementPids;
    t.ok(sandboxPids().includes(pid!), 'a sandbox process of this process');
    // the running process and the idle spare, both killed from outside
    for (const pid of sandboxPids()) process.kill(pid, 'SIGKILL');
    const res = await running;
    t.equal(res.ok, false);
    t.equal(res.error?.data.errorCode, 'INTERNAL_ERROR');
    t.equal(res.error?.data.code, 'INTERNAL_SERVER_ERROR');
    t.equal(res.status, 500);
    t.equal(
      res.error?.message,
      'The SQL sandbox process ended unexpectedly; send the statement again',
    );
    const logged = errors().filter(
      (c) => c.args[1] === 'cube.sqlQuery: the sandbox process crashed',
    );
    t.equal(logged.length, 1, 'the crash is logged once');
    t.match(logged[0]?.args[0], { signal: 'SIGKILL' });
    // the killed spare is not handed the next statement: a fresh process answers it
    t.same((await run(a, `${COUNT} WHERE units IS NOT NULL`)).data, counted);
    // the process that answered is ended just after its answer
    await until('the answering process to end', () => engine().sandboxStats().processes === 1);
    t.same(
      engine().sandboxStats(),
      { slots: 1, running: 0, waiting: 0, processes: 1, statementPids: [] },
      'the slot is free; the spare waits',
    );
  },
);

t.test('a spare that ended while it waited is not handed a statement', async (t) => {
  t.same((await run(a, 'SELECT 2')).data?.rows, [[2]]);
  await until('one process, the spare', () => engine().sandboxStats().processes === 1);
  // time for the spare to start (a statement sent to the dead process failed)
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const [spare, ...others] = sandboxPids();
  t.same(others, []);
  process.kill(spare!, 'SIGKILL');
  await until('the spare to end', () => engine().sandboxStats().processes === 0);
  t.same(
    (await run(a, `${COUNT} WHERE units IS NULL OR units IS NOT NULL`)).data,
    counted,
    'answered by a fresh process',
  );
});

t.test(
  'closing the engine answers running and waiting statements and leaves no sandbox process',
  async (t) => {
    t.same((await run(b, 'SELECT 1')).data?.rows, [[1]], "B's database is built");
    const before = engine();
    const running = run(a, slow(3));
    await until('the statement to run', () => before.sandboxStats().running === 1);
    const waiting = [run(a, `${COUNT} WHERE units > 0`), run(b, COUNT)];
    await until('two statements to wait', () => before.sandboxStats().waiting === 2);
    closeAnalytics(srv.deps);
    const answers = await Promise.all([running, ...waiting]);
    t.same(
      answers.map((r) => [r.error?.data.errorCode, r.error?.data.code, r.error?.message]),
      Array(3).fill([
        'SERVICE_UNAVAILABLE',
        'INTERNAL_SERVER_ERROR',
        'The SQL sandbox is shut down; send the statement again',
      ]),
    );
    t.same(
      before.sandboxStats(),
      { slots: 1, running: 0, waiting: 0, processes: 0, statementPids: [] },
      'every slot is given back',
    );
    await until('the sandbox processes to end', () => sandboxPids().length === 0);
    t.equal(factsOpen(a) + factsOpen(b), 0, 'no database is opened again by a refused statement');
    // the next call starts a new engine
    t.same((await run(b, COUNT)).data, counted);
  },
);
