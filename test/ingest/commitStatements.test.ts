// A statement's commit in few statements, against the real database: writes gathered with
// writesAlong (src/db/writesAlong.ts) run in the statement they go along with, SELECTs among them
// too, and answer nothing; and the run's commit transaction is 6 statements (its rates go along
// with its judging, its block refresh and activity with its rows), whose every write is there
// after it.
import t from 'tap';
import { createPool, withTransaction } from '../../src/db/pool.ts';
import { writesAlong } from '../../src/db/writesAlong.ts';
import { ingestStatement } from '../../src/ingest/pipeline.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { TASK } from '../../src/jobs/payloads.ts';
import type { Deps } from '../../src/deps.ts';
import { createTestDatabase } from '../helpers/db.ts';
import {
  createRightsholder,
  insertMapping,
  MONTHLY_USD_FIELDS,
  putFile,
} from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

t.setTimeout(300_000);

t.test('writes gathered go along with a later statement, and answer nothing', async (t) => {
  const database = await createTestDatabase();
  const pool = createPool(database.url, 2);
  t.teardown(async () => {
    await pool.end();
    await database.drop();
  });
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO organizations (name) VALUES ('Along') RETURNING id`,
  );
  const org = rows[0]!.id;
  const answered = await withTransaction(pool, async (db) => {
    const along = writesAlong();
    // a SELECT (a job added) and an INSERT, each with parameters of its own from $1
    await enqueue(along.db, TASK.catalog_block_refresh, {
      organizationId: org,
      rightsholderId: org,
      reason: 'along',
    });
    const inserted = await along.db.query(
      `INSERT INTO rightsholders (organization_id, name) VALUES ($1, $2)`,
      [org, 'Gathered'],
    );
    t.throws(() => inserted.rows, /answers nothing/);
    t.throws(() => along.db.query('WITH x AS (SELECT 1) SELECT * FROM x'), /cannot go along/);
    // nothing sent yet
    const before = await db.query(`SELECT count(*)::int AS n FROM rightsholders`);
    t.equal(before.rows[0]!.n, 0);
    const gathered = along.sql(2);
    const { rows } = await db.query<Record<string, number>>(
      `WITH own AS (UPDATE organizations SET name = $1 WHERE id = '${org}')${gathered.ctes} SELECT ${gathered.read}`,
      ['Along, renamed', ...gathered.params],
    );
    return rows[0];
  });
  t.same(answered, { along_0: 1 });
  const after = await pool.query(
    `SELECT (SELECT name FROM organizations WHERE id = $1) AS org,
       (SELECT array_agg(name) FROM rightsholders WHERE organization_id = $1) AS rightsholders,
       (SELECT count(*)::int FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p ON p.id = j.id
          WHERE j.task_identifier = $2 AND p.payload->>'reason' = 'along') AS jobs`,
    [org, TASK.catalog_block_refresh],
  );
  t.same(after.rows[0], { org: 'Along, renamed', rightsholders: ['Gathered'], jobs: 1 });
});

const HEADER = ['Period', 'Track', 'ISRC', 'Qty', 'Net'];
const CSV = Buffer.from(
  `${HEADER.join(',')}\n2024-03,Paper Boats,USAT20000001,3,1.50\n2024-03,Night Song,USAT20000002,2,2.25\n`,
);

/** The deps with the statements sent on each connection taken from the pool (a transaction's) recorded, by their first words. */
function recordingTransactions(deps: Deps, sent: string[]): Deps {
  const pool = Object.create(deps.pool) as Deps['pool'];
  pool.query = deps.pool.query.bind(deps.pool) as Deps['pool']['query'];
  pool.connect = (async () => {
    const client = await deps.pool.connect();
    const query = client.query;
    client.query = ((text: unknown, ...rest: unknown[]) => {
      sent.push(String(text).replace(/\s+/g, ' ').trim().split(' ').slice(0, 4).join(' '));
      return (query as (...a: unknown[]) => unknown).call(client, text, ...rest);
    }) as typeof client.query;
    const release = client.release;
    client.release = ((error?: Error | boolean) => {
      client.query = query;
      client.release = release;
      return release.call(client, error);
    }) as typeof client.release;
    return client;
  }) as Deps['pool']['connect'];
  return { ...deps, pool };
}

t.test(
  'the commit is 6 statements, its rates, block refresh and activity among them',
  async (t) => {
    const srv = await startTestServer(t, { role: 'api' });
    const owner = await newOrganization(srv, 'Commit Label');
    const org = owner.organizationId;
    await insertMapping(srv.deps.pool, org, 'Commit layout', HEADER, MONTHLY_USD_FIELDS);
    const rh = await createRightsholder(owner.client, org, 'Commit Artist');
    const { statementId } = await putFile(owner.client, org, rh, 'commit.csv', CSV);
    const sent: string[] = [];
    // no job runner here: the run is this call
    t.match(await ingestStatement(recordingTransactions(srv.deps, sent), org, statementId), {
      status: 'processed',
    });
    t.same(sent, [
      'BEGIN',
      'WITH me AS MATERIALIZED',
      'WITH flags AS (DELETE',
      'WITH flags AS (',
      'UPDATE statements SET status',
      'COMMIT',
    ]);
    const { rows } = await srv.deps.pool.query(
      `SELECT s.status, trim_scale(s.net_earnings)::text AS net,
       (SELECT json_agg(json_build_object('action', a.action, 'actor', a.actor_user_id, 'rightsholders', a.rightsholder_ids, 'label', a.subject_label))
        FROM activity_events a WHERE a.subject_id = s.id::text AND a.action = 'statement.processed') AS activity,
       (SELECT json_agg(json_build_object('payload', p.payload, 'queue', j.queue_name, 'priority', j.priority))
        FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p ON p.id = j.id WHERE j.key = 'catalog_block_refresh:' || s.rightsholder_id) AS refresh,
       (SELECT array_agg(f.kind ORDER BY f.created_at) FROM statement_flags f WHERE f.statement_id = s.id) AS flags,
       (SELECT array_agg(x.currency || ' ' || x.rate) FROM statement_fx x WHERE x.statement_id = s.id) AS fx
     FROM statements s WHERE s.id = $1`,
      [statementId],
    );
    t.same(rows[0], {
      status: 'processed',
      net: '3.75',
      activity: [
        {
          action: 'statement.processed',
          actor: owner.userId,
          rightsholders: [rh],
          label: 'commit.csv',
        },
      ],
      refresh: [
        {
          payload: { organizationId: org, rightsholderId: rh, reason: 'statement.processed' },
          queue: `catalog_block_refresh:${rh}`,
          priority: 32_767,
        },
      ],
      flags: null,
      fx: ['USD 1'],
    });
  },
);
