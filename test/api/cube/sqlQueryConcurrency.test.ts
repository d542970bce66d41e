// cube.sqlQuery under a burst of calls: only sandboxSlots() sandboxes run at once (each may grow to
// CUBE_SQL_MEMORY_MB + 384 MB, so an unbounded burst could take the machine's memory); the others
// wait, the organization with the fewest running first, and an organization may not hold more
// than MAX_PER_ORGANIZATION statements running or waiting (SQL_QUERY_BUSY: send it again later).
import t from 'tap';
import { MAX_PER_ORGANIZATION, sandboxSlots } from '../../../src/analytics/sandbox.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { sandboxPids } from '../../helpers/sandbox.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, {
  env: { CUBE_SQL_TIMEOUT_MS: '1000', CUBE_SQL_MEMORY_MB: '128' },
});
const slots = sandboxSlots({ memoryMb: 128 });
const a = await newOrganization(srv, 'Burst Org');
await seedDataset(srv, a.organizationId);
const b = await newOrganization(srv, 'Patient Org');
await seedDataset(srv, b.organizationId, 'B ');

// distinct statements (the same text would share one run) that each run until interrupted
const slow = (i: number) => `SELECT count(*) FROM range(1000000000000) r WHERE r.range <> ${i}`;
const run = (caller: typeof a, text: string) =>
  caller.client.mutate('cube.sqlQuery', { organizationId: caller.organizationId, sql: text });
const codeOf = (res: Awaited<ReturnType<typeof run>>) => (res.ok ? 'ok' : res.error.data.errorCode);

t.test(
  'a burst runs at most sandboxSlots() statements at once; every one is answered',
  async (t) => {
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, sandboxPids().length)), 25);
    const n = Math.min(slots + 4, MAX_PER_ORGANIZATION);
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => run(a, slow(i))));
    clearInterval(sampler);
    t.same(
      answers.map(codeOf),
      Array(n).fill('SQL_QUERY_TIMEOUT'),
      'each one ran to its own time limit',
    );
    t.ok(most <= slots + 1, `at most ${slots} running and the spare (saw ${most})`);
    t.same(
      (await run(a, 'SELECT count(*) FROM analytics_full_view')).data,
      { schema: [{ name: 'count_star()', column_type: 'BIGINT' }], rows: [['7']] },
      'slots are given back',
    );
  },
);

t.test(
  "one organization's burst is bounded and does not make another wait for all of it",
  async (t) => {
    // B's database is built beforehand, so that its statement reaches the queue at once
    t.same((await run(b, 'SELECT 1')).data?.rows, [[1]]);
    const order: string[] = [];
    const burst = Array.from({ length: MAX_PER_ORGANIZATION + 2 }, (_, i) =>
      run(a, slow(100 + i)).then((res) => {
        order.push(`a:${codeOf(res)}`);
        return res;
      }),
    );
    // B's one statement arrives after A's burst is queued
    await new Promise((resolve) => setTimeout(resolve, 300));
    const mine = await run(b, 'SELECT count(*) FROM analytics_full_view');
    order.push('b');
    const answers = await Promise.all(burst);
    t.same(mine.data?.rows, [['7']]);
    const refused = answers.filter((r) => !r.ok && r.error.data.errorCode === 'SQL_QUERY_BUSY');
    t.equal(refused.length, 2, 'the two beyond the per-organization bound are refused');
    const first = refused[0]!;
    if (first.ok) throw new Error('refused');
    t.equal(
      first.error.message,
      `${MAX_PER_ORGANIZATION} SQL statements of this organization are already running or waiting; send this one again when one of them has its answer`,
    );
    // retryable, unlike SQL_QUERY_RESOURCE_LIMIT (the statement itself needed too much memory)
    t.equal(first.error.data.code, 'INTERNAL_SERVER_ERROR');
    t.equal(first.status, 500);
    t.equal(
      answers.filter((r) => !r.ok && r.error.data.errorCode === 'SQL_QUERY_TIMEOUT').length,
      MAX_PER_ORGANIZATION,
    );
    // B's statement takes one of the first slots A gives back (first come first served, it would
    // wait for all eight of A's)
    const aAfterB = order
      .slice(order.indexOf('b'))
      .filter((o) => o === 'a:SQL_QUERY_TIMEOUT').length;
    t.ok(
      aAfterB >= MAX_PER_ORGANIZATION - 2 * slots - 2,
      `B is answered before much of A's burst (${order.join(', ')})`,
    );
  },
);
