// The freshness fingerprint: a reading is reused without asking PostgreSQL only when the caller's
// snapshot is the reading's own (nothing committed since); any other snapshot reads again. For a
// procedure call, the snapshot comes from the call's own authentication, so a change committed
// before a call is in its answer.
import t from 'tap';
import { analyticsFor } from '../../src/analytics/engine.ts';
import { readFingerprint } from '../../src/analytics/store.ts';
import { seedDataset } from './dataset.ts';
import { m, seedStatement } from './helpers.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import type { Outcome } from '../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Fingerprint Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const db = srv.deps.pool;

t.test('a reading is reused for its own snapshot only', async (t) => {
  const first = await readFingerprint(db, org);
  t.match(first.snapshot, /^\d+:\d+:/);
  await db.query('UPDATE rightsholders SET name = $2, updated_at = now() WHERE id = $1', [
    ds.rh1,
    'Renamed For Fingerprint',
  ]);
  // the reading's own snapshot: taken as it is (the rename is not seen: no query was made)
  const reused = await readFingerprint(db, org, first, first.snapshot);
  t.equal(reused, first);
  // any other snapshot, or none: read again, and the rename changes the version
  for (const snapshot of [undefined, `${first.snapshot}0`, '']) {
    const again = await readFingerprint(db, org, first, snapshot);
    t.not(again.snapshot, first.snapshot);
    t.not(again.fingerprint.version, first.fingerprint.version);
    t.equal(again.fingerprint.statements, first.fingerprint.statements, 'statements unchanged');
  }
});

t.test('a change committed before a call is in its answer, call after call', async (t) => {
  const query = {
    measures: [m('units')],
    dimensions: [m('rightsholder_name')],
    filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1] }],
  };
  for (const name of ['Name One', 'Name Two', 'Name Three']) {
    await db.query('UPDATE rightsholders SET name = $2, updated_at = now() WHERE id = $1', [
      ds.rh1,
      name,
    ]);
    // twice: the second request finds nothing committed since the first one's reading
    for (let i = 0; i < 2; i++) {
      const res: Outcome<any> = await owner.client.mutate('cube.query', {
        organizationId: org,
        query,
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      t.same(
        res.data.data,
        [{ [m('rightsholder_name')]: name, [m('units')]: '1611' }],
        `${name}, request ${i + 1}`,
      );
    }
  }
});

t.test(
  'new data loads and answers while another connection holds a write transaction (the checkpoint after it waits)',
  async (t) => {
    const query = {
      measures: [m('units')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh2] }],
    };
    const units = async () => {
      const res: Outcome<any> = await owner.client.mutate('cube.query', {
        organizationId: org,
        query,
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      return res.data.data[0][m('units')];
    };
    const before = await units();
    await analyticsFor(srv.deps)
      .facts(org)
      .withConnection(async (c) => {
        await c.run('BEGIN TRANSACTION');
        await c.run(`INSERT INTO meta VALUES ('probe', 'open write transaction')`);
        try {
          await seedStatement(srv, {
            organizationId: org,
            rightsholderId: ds.rh2,
            rows: [{ raw_title: 'Oscar', units: '5' }],
          });
          // DuckDB refuses a CHECKPOINT now: the sync commits, the query answers, the checkpoint waits
          t.equal(await units(), String(Number(before) + 5));
        } finally {
          await c.run('ROLLBACK');
        }
      });
  },
);

t.test(
  'a second engine of the same directory in one process reads a copy of its own, never the same file',
  async (t) => {
    const count = (facts: Awaited<ReturnType<ReturnType<typeof analyticsFor>['freshFacts']>>) =>
      facts.withConnection(async (c) => {
        const files = (
          await c.runAndReadAll(
            `SELECT path FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL`,
          )
        )
          .getRows()
          .map((r) => String(r[0]));
        const rows = Number((await c.runAndReadAll('SELECT count(*) FROM facts')).getRows()[0]![0]);
        return { file: files[0]!, rows };
      });
    const first = await count(await analyticsFor(srv.deps).freshFacts(org));
    const otherDeps = { ...srv.deps };
    const second = analyticsFor(otherDeps);
    t.teardown(() => second.close());
    // both load and write at once: two instances writing one file corrupted it
    await db.query('UPDATE rightsholders SET name = $2, updated_at = now() WHERE id = $1', [
      ds.rh2,
      'Two Engines',
    ]);
    const [a, b] = await Promise.all([
      analyticsFor(srv.deps).freshFacts(org).then(count),
      second.freshFacts(org).then(count),
    ]);
    t.match(first.file, /\/facts\.duckdb$/);
    t.equal(a.file, first.file);
    t.match(
      b.file,
      new RegExp(`/facts-${process.pid}-\\d+\\.duckdb$`),
      'the second engine has its own copy',
    );
    t.equal(b.rows, a.rows, 'with the same rows');
    t.ok(a.rows > 0);
    second.close();
    // once closed, its copy is gone and the shared file still answers
    const { existsSync } = await import('node:fs');
    t.notOk(existsSync(b.file), 'the copy is removed when its engine closes');
    t.same(await count(await analyticsFor(srv.deps).freshFacts(org)), a);
  },
);
