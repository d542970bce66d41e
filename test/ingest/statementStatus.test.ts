// The statement state machine (src/ingest/statementStatus.ts) against the real database: the table
// of transitions as docs/ingestion.md's lifecycle states it, every edge tried from every status (it
// moves a statement in one of its `from` statuses to its `to`, and leaves any other as it was,
// answering no rows), the guards beside the status (a read file is no upload, a run ends only its
// own statement), and no status written anywhere else in src/.
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { AppError } from '../../src/errors.ts';
import { statementStatuses, type StatementStatus } from '../../src/ingest/statements.ts';
import {
  abortUpload,
  awaitMapping,
  completeUpload,
  deleteStatement,
  expireDueUploads,
  failRun,
  failWaiting,
  finishRun,
  markRedriven,
  markStatementBad,
  moved,
  reprocessMatching,
  reprocessStatement,
  restoreStatement,
  retryRun,
  settleWaiting,
  skipStatement,
  startRun,
  statementTransitions,
  transitionAllows,
  type StatementTransition,
} from '../../src/ingest/statementStatus.ts';
import { createTestDatabase } from '../helpers/db.ts';

const database = await createTestDatabase();
const pool: Pool = createPool(database.url, 4);
t.teardown(async () => {
  await pool.end();
  await database.drop();
});

const { rows: orgRows } = await pool.query<{ id: string }>(
  `INSERT INTO organizations (name) VALUES ('State machine') RETURNING id`,
);
const org = orgRows[0]!.id;
const { rows: rhRows } = await pool.query<{ id: string }>(
  `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'RH') RETURNING id`,
  [org],
);
const rightsholder = rhRows[0]!.id;
const { rows: upRows } = await pool.query<{ id: string }>(
  `INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id`,
  [org],
);
const upload = upRows[0]!.id;

/** A statement in `status`: a direct upload past its TTL, waiting on header hash `h`, never read; a deleted one was processed before. */
async function seed(status: StatementStatus, extra: { read?: boolean } = {}): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status, header_hash,
       upload_expires_at, status_before_delete, deleted_at, located)
     VALUES ($1, $2, $3, 'a.csv', 'text/csv', 'seed/' || gen_random_uuid(), $4, 'h', clock_timestamp() - interval '1 second',
       CASE WHEN $4 = 'deleted' THEN 'processed' END, CASE WHEN $4 = 'deleted' THEN clock_timestamp() END, $5::jsonb)
     RETURNING id`,
    [org, upload, rightsholder, status, extra.read ? '{}' : null],
  );
  return rows[0]!.id;
}

const statusOf = async (id: string) =>
  (await pool.query<{ status: string }>('SELECT status FROM statements WHERE id = $1', [id]))
    .rows[0]!.status;

/** Each edge as its callers take it, on one statement; the rows it moved. */
const take: Record<StatementTransition, (id: string) => Promise<unknown[]>> = {
  complete: (id) => completeUpload(pool, id, { size: 10, etag: '"e"' }),
  expireUpload: (id) => expireDueUploads(pool, { organizationId: org, statementIds: [id] }),
  abortUpload: (id) => abortUpload(pool, id, 'given up'),
  reprocess: (id) => reprocessStatement(pool, id),
  redrive: (id) => markRedriven(pool, org, [id]),
  release: (id) =>
    settleWaiting(pool, 'release', {
      organizationId: org,
      headerHash: 'h',
      statementId: id,
      uploadId: null,
      scope: null,
      distributorId: null,
    }),
  skipWaiting: (id) =>
    settleWaiting(pool, 'skipWaiting', {
      organizationId: org,
      headerHash: 'h',
      statementId: id,
      uploadId: null,
      scope: null,
      distributorId: null,
    }),
  markWaitingBad: (id) =>
    settleWaiting(pool, 'markWaitingBad', {
      organizationId: org,
      headerHash: 'h',
      statementId: id,
      uploadId: null,
      scope: null,
      distributorId: null,
    }),
  skip: (id) => skipStatement(pool, id),
  markBad: (id) => markStatementBad(pool, id),
  delete: (id) => deleteStatement(pool, id),
  restore: (id) => restoreStatement(pool, id),
  startRun: async (id) => {
    const s = await startRun(pool, org, id);
    return s ? [s] : [];
  },
  awaitMapping: (id) => awaitMapping(pool, id, { fields: {} }),
  finishRun: (id) => finishRun(pool, id, 'kept_rows = $2', [7]),
  failRun: (id) => failRun(pool, id, 'INGEST_FAILED', 'failed'),
  retryRun: (id) => retryRun(pool, id),
  failWaiting: (id) => failWaiting(pool, id, 'INGEST_FAILED', 'failed'),
};

t.test('the table: which statuses each edge leaves and the one it enters', async (t) => {
  const all = [
    'uploading',
    'uploaded',
    'processing',
    'processed',
    'needs_mapping',
    'failed',
    'skipped',
    'bad',
    'aborted',
    'expired',
  ];
  t.same(JSON.parse(JSON.stringify(statementTransitions)), {
    complete: { from: ['uploading', 'uploaded'], to: 'uploaded' },
    expireUpload: { from: ['uploading'], to: 'expired' },
    abortUpload: { from: ['uploading', 'uploaded'], to: 'aborted' },
    reprocess: {
      from: ['processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'uploaded', 'processing'],
      to: 'uploaded',
    },
    redrive: {
      from: ['uploaded', 'processing', 'processed', 'needs_mapping', 'failed'],
      to: 'uploaded',
    },
    release: { from: ['needs_mapping'], to: 'uploaded' },
    skipWaiting: { from: ['needs_mapping'], to: 'skipped' },
    markWaitingBad: { from: ['needs_mapping'], to: 'bad' },
    skip: {
      from: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing'],
      to: 'skipped',
    },
    markBad: {
      from: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing', 'skipped'],
      to: 'bad',
    },
    delete: { from: all, to: 'deleted' },
    restore: { from: ['deleted'], to: 'before_delete' },
    startRun: {
      from: ['uploaded', 'processing', 'processed', 'needs_mapping', 'failed'],
      to: 'processing',
    },
    awaitMapping: { from: ['processing'], to: 'needs_mapping' },
    finishRun: { from: ['processing'], to: 'processed' },
    failRun: { from: ['processing'], to: 'failed' },
    retryRun: { from: ['processing'], to: 'uploaded' },
    failWaiting: { from: ['uploaded', 'processing'], to: 'failed' },
  });
  t.same(
    Object.keys(take).sort(),
    Object.keys(statementTransitions).sort(),
    'every edge is tried below',
  );
  // nothing leaves a status the table does not know, nor enters one
  for (const { from, to } of Object.values(statementTransitions)) {
    for (const s of from) t.ok(statementStatuses.includes(s), s);
    if (to !== 'before_delete') t.ok(statementStatuses.includes(to), to);
  }
});

for (const edge of Object.keys(statementTransitions) as StatementTransition[]) {
  t.test(`${edge}: moves a statement in each of its statuses, refuses every other`, async (t) => {
    const { to } = statementTransitions[edge];
    for (const status of statementStatuses) {
      const id = await seed(status);
      const rows = await take[edge](id);
      if (transitionAllows(edge, status)) {
        t.equal(rows.length, 1, `${status} → moved`);
        // restore: back to the status the statement had when it was deleted (seeded processed)
        t.equal(await statusOf(id), to === 'before_delete' ? 'processed' : to, `${status} → ${to}`);
      } else {
        t.equal(rows.length, 0, `${status}: refused`);
        t.equal(await statusOf(id), status, `${status}: left as it was`);
      }
    }
  });
}

t.test('guards beside the status', async (t) => {
  // a file a run has read is no upload any more: complete and abort refuse it even while uploaded
  const read = await seed('uploaded', { read: true });
  t.same(await completeUpload(pool, read, { size: 1, etag: null }), []);
  t.same(await abortUpload(pool, read, 'late'), []);
  t.equal(await statusOf(read), 'uploaded');

  // complete records the object as checked and ends the upload's time-to-live
  const up = await seed('uploading');
  t.equal((await completeUpload(pool, up, { size: 1234, etag: '"abc"' })).length, 1);
  const done = await pool.query(
    'SELECT status, size_bytes::int AS size, object_etag, upload_expires_at FROM statements WHERE id = $1',
    [up],
  );
  t.same(done.rows[0], {
    status: 'uploaded',
    size: 1234,
    object_etag: '"abc"',
    upload_expires_at: null,
  });

  // an upload whose TTL has not run out is not expired
  const live = await seed('uploading');
  await pool.query(
    `UPDATE statements SET upload_expires_at = clock_timestamp() + interval '1 hour' WHERE id = $1`,
    [live],
  );
  t.same(await expireDueUploads(pool, { organizationId: org, statementIds: [live] }), []);
  t.equal(await statusOf(live), 'uploading');

  // a delete while processing is remembered as uploaded (its run ends): restore queues it again
  const running = await seed('processing');
  t.equal((await deleteStatement(pool, running)).length, 1);
  const deleted = await pool.query(
    'SELECT status, status_before_delete, deleted_at IS NOT NULL AS gone FROM statements WHERE id = $1',
    [running],
  );
  t.same(deleted.rows[0], { status: 'deleted', status_before_delete: 'uploaded', gone: true });
  t.same(await restoreStatement(pool, running), [{ id: running, status: 'uploaded' }]);
  const restored = await pool.query(
    'SELECT status_before_delete, deleted_at FROM statements WHERE id = $1',
    [running],
  );
  t.same(restored.rows[0], { status_before_delete: null, deleted_at: null });

  // a failure records its reason, cut at 1000 characters, and its details
  const failing = await seed('processing');
  await failRun(pool, failing, 'AMOUNT_FORMAT_CONFLICT', 'x'.repeat(1500), {
    rows: [{ row: 3, value: '(12.00)' }],
  });
  const failed = await pool.query(
    'SELECT status, failure_code, length(failure_reason) AS len, failure_details FROM statements WHERE id = $1',
    [failing],
  );
  t.same(failed.rows[0], {
    status: 'failed',
    failure_code: 'AMOUNT_FORMAT_CONFLICT',
    len: 1000,
    failure_details: { rows: [{ row: 3, value: '(12.00)' }] },
  });

  // startRun clears the previous run's failure and answers what the run reads
  const again = await startRun(pool, org, failing);
  t.equal(again?.id, failing);
  t.same(
    (
      await pool.query(
        'SELECT status, failure_code, failure_details, progress_stage FROM statements WHERE id = $1',
        [failing],
      )
    ).rows[0],
    {
      status: 'processing',
      failure_code: null,
      failure_details: null,
      progress_stage: 'reading',
    },
  );
  // of another organization it is nobody's run
  const { rows: other } = await pool.query<{ id: string }>(
    `INSERT INTO organizations (name) VALUES ('Other') RETURNING id`,
  );
  const waiting = await seed('uploaded');
  t.equal(await startRun(pool, other[0]!.id, waiting), undefined);
  t.same(
    await failWaiting(pool, waiting, 'ORGANIZATION_NOT_FOUND', 'gone', {
      organizationId: other[0]!.id,
    }),
    [],
  );
  t.equal(await statusOf(waiting), 'uploaded');

  // the callback waits on the header hash, and assigns the distributor given
  const hashless = await seed('needs_mapping');
  t.same(
    await settleWaiting(pool, 'release', {
      organizationId: org,
      headerHash: 'other',
      statementId: hashless,
      uploadId: null,
      scope: null,
      distributorId: null,
    }),
    [],
  );
  const outOfScope = await settleWaiting(pool, 'release', {
    organizationId: org,
    headerHash: 'h',
    statementId: hashless,
    uploadId: null,
    scope: [],
    distributorId: null,
  });
  t.same(outOfScope, [], "a rightsholder outside the caller's scope is not released");
  t.equal(await statusOf(hashless), 'needs_mapping');
});

t.test("a run's start commits without waiting for the disk, its end waits", async (t) => {
  // one connection: the transaction begun here is the one startRun's statement runs in, and the
  // setting it leaves there is the one its commit would have read
  const one = createPool(database.url, 1);
  t.teardown(() => one.end());
  const setting = async () =>
    (await one.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!
      .synchronous_commit;
  const id = await seed('uploaded');
  await one.query('BEGIN');
  t.equal(await setting(), 'on');
  t.equal((await startRun(one, org, id))?.status, 'processing');
  t.equal(await setting(), 'off', 'startRun: synchronous_commit off for its transaction');
  await one.query('COMMIT');
  t.equal(await setting(), 'on', 'only for that transaction');
  t.equal(await statusOf(id), 'processing');
  // a start that takes nothing (another organization's) sets nothing: nothing to flush anyway
  await one.query('BEGIN');
  t.equal(await startRun(one, randomUUID(), id), undefined);
  t.equal(await setting(), 'on');
  // the run's commit (finishRun, in its transaction) waits for the disk as every other write
  t.equal((await finishRun(one, id, 'kept_rows = $2', [3])).length, 1);
  t.equal(await setting(), 'on');
  await one.query('COMMIT');
  t.equal(await statusOf(id), 'processed');
});

t.test('moved(): no row moved is STATEMENT_STATE_CONFLICT', async (t) => {
  const id = await seed('aborted');
  const error = await reprocessStatement(pool, id)
    .then((rows) => moved(rows, 'not now'))
    .catch((e: unknown) => e);
  t.ok(error instanceof AppError);
  t.match(error, { errorCode: 'STATEMENT_STATE_CONFLICT', message: 'not now' });
  t.same(moved([{ id }]), [{ id }]);
});

t.test('admin reprocess answers each statement with its status before', async (t) => {
  const { rows: o } = await pool.query<{ id: string }>(
    `INSERT INTO organizations (name) VALUES ('Reprocess') RETURNING id`,
  );
  const { rows: rh } = await pool.query<{ id: string }>(
    `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'R') RETURNING id`,
    [o[0]!.id],
  );
  const { rows: u } = await pool.query<{ id: string }>(
    `INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id`,
    [o[0]!.id],
  );
  const ids: Record<string, string> = {};
  for (const status of [
    'processed',
    'skipped',
    'bad',
    'failed',
    'aborted',
    'processing',
  ] as const) {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status)
       VALUES ($1, $2, $3, 'r.csv', 'text/csv', 'seed/' || gen_random_uuid(), $4) RETURNING id`,
      [o[0]!.id, u[0]!.id, rh[0]!.id, status],
    );
    ids[status] = rows[0]!.id;
  }
  const moved = await reprocessMatching(pool, {
    organizationId: o[0]!.id,
    statuses: ['processed', 'skipped', 'bad', 'aborted'],
  });
  t.same(
    moved
      .map((r) => ({ id: r.id, before: r.before, rightsholder: r.rightsholder_id }))
      .sort((a, b) => a.before.localeCompare(b.before)),
    [
      { id: ids.bad, before: 'bad', rightsholder: rh[0]!.id },
      { id: ids.processed, before: 'processed', rightsholder: rh[0]!.id },
      { id: ids.skipped, before: 'skipped', rightsholder: rh[0]!.id },
    ],
    'aborted is asked for but the edge does not leave it; failed and processing are not asked for',
  );
  t.equal(await statusOf(ids.aborted!), 'aborted');
  t.equal(await statusOf(ids.failed!), 'failed');
  t.equal(await statusOf(ids.processed!), 'uploaded');
});

t.test('no statement status is written outside the state machine', async (t) => {
  const root = path.resolve(import.meta.dirname, '../../src');
  const files = (await readdir(root, { recursive: true }))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(root, f));
  t.ok(files.length > 100);
  const writers: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    // an UPDATE of statements whose SET list names status (not status_before_delete alone)
    for (const m of text.matchAll(/UPDATE\s+statements\b[^;]*?\bSET\b([^;]*?)\bWHERE\b/gis)) {
      if (/(^|[\s,])status\s*=/i.test(m[1]!)) writers.push(path.relative(root, file));
    }
  }
  t.same([...new Set(writers)], ['ingest/statementStatus.ts']);
});
