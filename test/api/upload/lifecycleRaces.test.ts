// The statement lifecycle's edges, at the handler without a job runner (each
// statement is processed by a direct call of the pipeline, so every interleaving is the test's
// choice): an abort of a statement already read, heartbeats and completes after the TTL, a file
// added by a restricted member to an upload they cannot see, bytes replaced after complete, and
// the duplicate and overlap flags of statements processed at the same time.
import t from 'tap';
import { createRightsholder, insertMapping, putFile } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { ingestStatement } from '../../../src/ingest/pipeline.ts';
import type { LocateInput } from '../../../src/ingest/fileTypes.ts';
import type { TaskOptions } from '../../../src/workers/threadPool.ts';
import { expireUploads } from '../../../src/jobs/tasks/statement_upload_expire.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Races Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Races Artist');
const second = await createRightsholder(owner.client, org, 'Second Artist');
await insertMapping(db, org, 'Races layout', EUR_REPORT_HEADER, eurReportFields);

const csv = (rows: string[][]) =>
  Buffer.from([EUR_REPORT_HEADER, ...rows].map((r) => r.join(',')).join('\n') + '\n');
const row = (period: string, net: string, track = 'Song') => [
  period,
  'Spotify',
  track,
  'USRC12400001',
  'US',
  '1',
  net,
];

const act = (type: string, statementId: string) =>
  owner.client.mutateUnchecked('upload.uploadAction', {
    organizationId: org,
    action: { type, statementId },
  });
const record = async (id: string) => {
  const res = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [id], includeDeleted: true },
  });
  return res.data.items[0];
};
/** A statement of one row uploaded and completed (its job queued), for `rh` (default: artist). */
const upload = (fileName: string, period: string, net: string, rh = artist, extra = {}) =>
  putFile(owner.client, org, rh, fileName, csv([row(period, net)]), extra);
/** One run of the pipeline on the statement, as its job would: the status it ended in. */
const ingest = async (statementId: string) =>
  (await ingestStatement(srv.deps, org, statementId)).status;
/** The statement's row in the database, these columns of it. */
const statementRow = async (statementId: string, columns: string) =>
  (await db.query(`SELECT ${columns} FROM statements WHERE id = $1`, [statementId])).rows[0];
/** How many ingestion jobs are queued for the statement. */
const queuedJobs = async (statementId: string) =>
  (
    await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = $1',
      [`statement_ingest:${statementId}`],
    )
  ).rows[0]!.n;
const removeJob = (statementId: string) =>
  db.query('SELECT graphile_worker.remove_job($1)', [`statement_ingest:${statementId}`]);
/** An upload started for `fileName` (of artist), its TTL running. */
const startUpload = (fileName: string) =>
  owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName,
  });
/** The upload's TTL moved to `interval` from now (negative: ran out), as if that time had passed. */
const expiresIn = (statementId: string, interval: string) =>
  db.query(
    `UPDATE statements SET upload_expires_at = clock_timestamp() + interval '${interval}' WHERE id = $1`,
    [statementId],
  );

t.test(
  'an abort takes only an upload not read yet: a statement queued again keeps its file and rows',
  async (t) => {
    const up = await upload('kept.csv', '2024-03', '1.25');
    t.equal(await ingest(up.statementId), 'processed');
    t.equal((await act('reprocess', up.statementId)).data.status, 'uploaded');
    const before = await statementRow(up.statementId, 'object_key, normalized_key');
    isError(
      t,
      await owner.client.mutate('upload.aborted', {
        organizationId: org,
        statementId: up.statementId,
      }),
      'CONFLICT',
      'STATEMENT_STATE_CONFLICT',
    );
    t.ok(await srv.deps.store.head(before.object_key), 'the original is still there');
    t.ok(await srv.deps.store.head(before.normalized_key), 'and its rows');
    t.equal(await ingest(up.statementId), 'processed', 'the reprocess still runs');
    t.match(await record(up.statementId), {
      status: 'processed',
      netEarnings: '1.250000000000',
      failureReason: null,
    });

    // one that failed before being read, sent back, likewise
    const failed = await putFile(
      owner.client,
      org,
      artist,
      'html.csv',
      Buffer.from('<!DOCTYPE html><html><body>x</body></html>'),
    );
    t.equal(await ingest(failed.statementId), 'failed');
    t.equal((await act('reprocess', failed.statementId)).data.status, 'uploaded');
    isError(
      t,
      await owner.client.mutate('upload.aborted', {
        organizationId: org,
        statementId: failed.statementId,
      }),
      'CONFLICT',
      'STATEMENT_STATE_CONFLICT',
    );
    // a completed upload not read yet is still the client's to abort
    const fresh = await upload('fresh.csv', '2024-03', '2.00');
    const aborted = await owner.client.mutate('upload.aborted', {
      organizationId: org,
      statementId: fresh.statementId,
      reason: 'wrong file',
    });
    t.match(aborted.data, {
      status: 'aborted',
      failureReason: { errorCode: 'UPLOAD_ABORTED', message: 'wrong file' },
    });
    t.equal(await ingest(fresh.statementId), 'skipped', 'its queued job does nothing');
  },
);

t.test(
  'past its TTL an upload is expired: a late heartbeat or complete does not bring it back',
  async (t) => {
    const start = await startUpload('late.csv');
    const id = start.data.statementId;
    t.equal(
      (
        await fetch(start.data.url, {
          method: 'PUT',
          headers: start.data.headers,
          body: csv([row('2024-03', '1.00')]),
        })
      ).status,
      200,
    );
    // the TTL ran out a moment ago; the minute job has not run yet
    await expiresIn(id, '-1 second');
    const beat = await owner.client.mutate('upload.heartbeat', {
      organizationId: org,
      statementIds: [id],
    });
    t.same(beat.data, { extended: [], notExtended: [id] });
    t.equal((await record(id)).status, 'expired');
    isError(t, await act('complete', id), 'CONFLICT', 'STATEMENT_STATE_CONFLICT');
    t.equal(await expireUploads(srv.deps), 0, 'nothing left for the job');

    // a complete after the TTL, with no heartbeat before it
    const other = await startUpload('later.csv');
    t.equal(
      (
        await fetch(other.data.url, {
          method: 'PUT',
          headers: other.data.headers,
          body: csv([row('2024-03', '1.00')]),
        })
      ).status,
      200,
    );
    await expiresIn(other.data.statementId, '-1 second');
    isError(
      t,
      await act('complete', other.data.statementId),
      'CONFLICT',
      'STATEMENT_STATE_CONFLICT',
    );
    t.match(await record(other.data.statementId), { status: 'expired', uploadExpiresAt: String });
    // by upload too
    isError(
      t,
      await owner.client.mutate('upload.uploadAction', {
        organizationId: org,
        action: { type: 'complete', uploadId: other.data.uploadId },
      }),
      'CONFLICT',
      'STATEMENT_STATE_CONFLICT',
    );

    // a heartbeat in time extends it, for the TTL from now
    const live = await startUpload('live.csv');
    await expiresIn(live.data.statementId, '2 seconds');
    const ok = await owner.client.mutate('upload.heartbeat', {
      organizationId: org,
      statementIds: [live.data.statementId, id],
    });
    t.same(
      ok.data.extended.map((e: any) => e.statementId),
      [live.data.statementId],
    );
    t.same(ok.data.notExtended, [id]);
    t.ok(new Date(ok.data.extended[0].expiresAt).getTime() - Date.now() > 14 * 60_000);
  },
);

t.test(
  'a member restricted to some rightsholders adds no file to an upload they cannot see',
  async (t) => {
    const theirs = await startUpload('owner.csv');
    const restricted = await addMember(srv, org, 'writer');
    await db.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, restricted.userId, [second]],
    );
    const add = (uploadId: string) =>
      restricted.client.mutate('upload.uploadFile', {
        organizationId: org,
        rightsholderId: second,
        fileName: 'mine.csv',
        uploadId,
      });
    isError(t, await add(theirs.data.uploadId), 'NOT_FOUND', 'UPLOAD_NOT_FOUND');
    const files = await db.query('SELECT count(*)::int AS n FROM statements WHERE upload_id = $1', [
      theirs.data.uploadId,
    ]);
    t.equal(files.rows[0].n, 1, 'nothing added');
    // their own upload, and one with a file they may see, take more files
    const own = await restricted.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: second,
      fileName: 'first.csv',
    });
    t.equal((await add(own.data.uploadId)).ok, true);
    const shared = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: second,
      fileName: 'shared.csv',
    });
    t.equal((await add(shared.data.uploadId)).ok, true);
  },
);

t.test(
  'duplicate and overlap flags of statements processed at the same time: exactly one of two is flagged',
  async (t) => {
    const dist = await owner.client.mutate('distributor.create', {
      organizationId: org,
      name: 'Races Distributor',
    });
    const distributorId = dist.data.id;
    const judged = async (ids: string[]) => {
      const { rows } = await db.query<{ statement_id: string; kind: string; details: any }>(
        `SELECT statement_id, kind, details FROM statement_flags WHERE statement_id = ANY ($1) AND kind IN ('duplicate_upload', 'overlapping_period') ORDER BY kind, statement_id`,
        [ids],
      );
      return rows;
    };
    for (let round = 0; round < 3; round++) {
      const rh = await createRightsholder(owner.client, org, `Twin Artist ${round}`);
      // the same bytes twice, processed at once
      const bytes = csv([row(`2023-0${round + 1}`, `${round}.50`, `Twin ${round}`)]);
      const a = await putFile(owner.client, org, rh, 'twin-a.csv', bytes, { distributorId });
      const b = await putFile(owner.client, org, rh, 'twin-b.csv', bytes, { distributorId });
      const results = await Promise.all([
        ingestStatement(srv.deps, org, a.statementId),
        ingestStatement(srv.deps, org, b.statementId),
      ]);
      t.same(
        results.map((r) => r.status),
        ['processed', 'processed'],
      );
      const flags = await judged([a.statementId, b.statementId]);
      const dup = flags.filter((f) => f.kind === 'duplicate_upload');
      t.equal(dup.length, 1, `round ${round}: one of the two is the duplicate`);
      const [flagged, first] = dup[0]!.statement_id === b.statementId ? [b, a] : [a, b];
      t.same(dup[0]!.details, { statementId: first.statementId }, 'of the other');
      const overlap = flags.filter((f) => f.kind === 'overlapping_period');
      t.same(
        overlap.map((f) => [f.statement_id, f.details]),
        [
          [
            overlap[0]?.statement_id,
            {
              statementIds: [
                overlap[0]?.statement_id === a.statementId ? b.statementId : a.statementId,
              ],
            },
          ],
        ],
        'one overlap, naming the other',
      );
      // processed again, each keeps what it was
      for (const s of [first, flagged, first]) {
        await act('reprocess', s.statementId);
        t.equal(await ingest(s.statementId), 'processed');
        t.same(
          (await judged([a.statementId, b.statementId]))
            .filter((f) => f.kind === 'duplicate_upload')
            .map((f) => [f.statement_id, f.details]),
          [[flagged.statementId, { statementId: first.statementId }]],
          'the same one flagged after a reprocess',
        );
      }
    }
    // the later upload processed first, the earlier after it: the earlier is the duplicate of the processed one
    const rh = await createRightsholder(owner.client, org, 'Order Artist');
    const bytes = csv([row('2022-11', '7.00', 'Order')]);
    const early = await putFile(owner.client, org, rh, 'early.csv', bytes);
    const late = await putFile(owner.client, org, rh, 'late.csv', bytes);
    t.equal(await ingest(late.statementId), 'processed');
    t.equal(await ingest(early.statementId), 'processed');
    t.same(
      (await judged([early.statementId, late.statementId])).map((f) => [
        f.statement_id,
        f.kind,
        f.details,
      ]),
      [[early.statementId, 'duplicate_upload', { statementId: late.statementId }]],
    );
    // two statements of one period with different bytes, processed at once: one overlap flag
    const c = await putFile(owner.client, org, rh, 'c.csv', csv([row('2022-05', '1.00', 'C')]), {
      distributorId,
    });
    const e = await putFile(owner.client, org, rh, 'e.csv', csv([row('2022-05', '2.00', 'E')]), {
      distributorId,
    });
    await Promise.all([
      ingestStatement(srv.deps, org, c.statementId),
      ingestStatement(srv.deps, org, e.statementId),
    ]);
    const overlaps = await judged([c.statementId, e.statementId]);
    t.equal(overlaps.length, 1, 'one of the two overlaps the other');
    t.equal(overlaps[0]?.kind, 'overlapping_period');
  },
);

t.test(
  'bytes PUT again after complete are never read: the statement fails with UPLOAD_OBJECT_CHANGED',
  async (t) => {
    const checked = csv([row('2024-07', '1.00')]);
    const other = csv([row('2024-07', '1.00'), row('2024-07', '999999.00', 'Injected')]);
    const start = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'swapped.csv',
      size: checked.length,
    });
    const put = (body: Buffer) =>
      fetch(start.data.url, { method: 'PUT', headers: start.data.headers, body });
    t.equal((await put(checked)).status, 200);
    // two completes at once: both answer uploaded, one job
    const both = await Promise.all([
      act('complete', start.data.statementId),
      act('complete', start.data.statementId),
    ]);
    t.same(
      both.map((r) => r.ok && r.data.status),
      ['uploaded', 'uploaded'],
    );
    t.equal(await queuedJobs(start.data.statementId), 1);
    // the URL still works: other bytes (of another size than announced) replace the checked ones
    t.equal((await put(other)).status, 200);
    t.equal(await ingest(start.data.statementId), 'failed');
    t.match(await record(start.data.statementId), {
      status: 'failed',
      failureReason: { errorCode: 'UPLOAD_OBJECT_CHANGED' },
      rowCount: null,
      netEarnings: null,
      size: checked.length,
    });

    // replaced after processing: a reprocess fails and the rows read before stay
    const up = await putFile(owner.client, org, artist, 'later-swap.csv', checked);
    t.equal(await ingest(up.statementId), 'processed');
    const s = await statementRow(up.statementId, 'object_key, content_type');
    await srv.deps.store.put(s.object_key, other, s.content_type);
    const trimmed = await owner.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: org,
      type: 'trimmed',
      file: up.statementId,
    });
    isError(t, trimmed, 'BAD_REQUEST', 'UPLOAD_OBJECT_CHANGED');
    // nor is it served or sampled as the original
    isError(
      t,
      await owner.client.mutate('fileStorage.downloadStatementFile', {
        organizationId: org,
        type: 'original',
        file: up.statementId,
      }),
      'BAD_REQUEST',
      'UPLOAD_OBJECT_CHANGED',
    );
    isError(
      t,
      await owner.client.query('fileStorage.getSample', {
        organizationId: org,
        type: 'original',
        file: up.statementId,
      }),
      'BAD_REQUEST',
      'UPLOAD_OBJECT_CHANGED',
    );
    // the normalized rows read from the checked bytes still are
    const sample = await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'normalized',
      file: up.statementId,
    });
    t.equal(sample.ok && sample.data.rows.length, 1);
    t.equal((await act('reprocess', up.statementId)).data.status, 'uploaded');
    // a statement read before is no upload in progress: complete does not take its object again
    isError(t, await act('complete', up.statementId), 'CONFLICT', 'STATEMENT_STATE_CONFLICT');
    t.equal(await ingest(up.statementId), 'failed');
    t.match(await record(up.statementId), {
      status: 'failed',
      failureReason: { errorCode: 'UPLOAD_OBJECT_CHANGED' },
      keptRows: 1,
      netEarnings: '1.000000000000',
    });
  },
);

/**
 * Deps whose file reader waits at a gate: after hold(), the next run to read a file stops there,
 * processing, until release(); atGate settles when it got there. runHeld(id) starts a run of the
 * statement and settles once it waits at the gate.
 */
function gatedRuns() {
  let gate: { reached: () => void; opened: Promise<void> } | null = null;
  const threads = Object.create(srv.deps.threads);
  threads.locateTable = async (input: LocateInput, options?: TaskOptions) => {
    const g = gate;
    if (g) {
      gate = null;
      g.reached();
      await g.opened;
    }
    return srv.deps.threads.locateTable(input, options);
  };
  return {
    deps: { ...srv.deps, threads },
    hold() {
      let release!: () => void;
      const atGate = new Promise<void>(
        (reached) => (gate = { reached, opened: new Promise<void>((r) => (release = r)) }),
      );
      return { atGate, release: () => release() };
    },
    async runHeld(statementId: string) {
      const { atGate, release } = this.hold();
      const run = ingestStatement(this.deps, org, statementId);
      await atGate;
      return { run, release };
    },
  };
}

t.test(
  'a statement deleted while a run reads it, after a redrive, stays deleted whatever the run ends in',
  async (t) => {
    const gated = gatedRuns();
    const mappingId = (
      await db.query<{ id: string }>('SELECT id FROM mappings WHERE organization_id = $1 LIMIT 1', [
        org,
      ])
    ).rows[0]!.id;

    for (const [name, bytes, outcome] of [
      ['page.csv', Buffer.from('<!DOCTYPE html><html><body>Please log in</body></html>'), 'failed'],
      ['unknown.csv', Buffer.from('Alpha,Beta,Gamma\n1,2,3\n'), 'needs_mapping'],
    ] as const) {
      const up = await putFile(owner.client, org, artist, name, bytes);
      const { run, release } = await gated.runHeld(up.statementId);
      t.equal((await record(up.statementId)).status, 'processing');
      // sent back to be processed again while it runs, then deleted
      const redrive = await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: mappingId,
        redriveFileIds: [up.statementId],
      });
      t.same(redrive.ok && redrive.data.redriven, [up.statementId]);
      t.equal((await act('delete', up.statementId)).data.status, 'deleted');
      release();
      t.equal((await run).statementId, up.statementId, `the run would have ended ${outcome}`);
      t.match(
        await record(up.statementId),
        { status: 'deleted', deletedAt: String, failureReason: null },
        `${name}: still deleted`,
      );
      t.equal(
        (await act('restore', up.statementId)).data.status,
        'uploaded',
        'and restored to what it was',
      );
    }
  },
);

t.test(
  'reprocess takes a statement being processed, as a redrive does: the run commits nothing, the next one reads it',
  async (t) => {
    const gated = gatedRuns();
    const up = await upload('running.csv', '2024-10', '2.50');
    const { run, release } = await gated.runHeld(up.statementId);
    t.equal((await record(up.statementId)).status, 'processing');
    // before, CONFLICT here while mapping.updateById redriveFileIds took the same statement
    const again = await act('reprocess', up.statementId);
    t.equal(again.ok, true, 'accepted');
    t.equal(again.data.status, 'uploaded', 'queued again');
    t.equal(await queuedJobs(up.statementId), 1, 'a job is queued');
    release();
    await run;
    const after = await statementRow(
      up.statementId,
      'status, normalized_version AS v, normalized_key',
    );
    t.same(
      after,
      { status: 'uploaded', v: 0, normalized_key: null },
      'the run sent back commits nothing',
    );
    t.equal(await ingest(up.statementId), 'processed');
    t.match(await record(up.statementId), {
      status: 'processed',
      keptRows: 1,
      netEarnings: '2.500000000000',
    });
  },
);

t.test(
  'a statement being processed can be deleted: the run commits nothing, a restore queues it again',
  async (t) => {
    const gated = gatedRuns();
    const up = await upload('wrong-file.csv', '2024-12', '7.00');
    const { run, release } = await gated.runHeld(up.statementId);
    t.equal((await record(up.statementId)).status, 'processing');
    // before, CONFLICT: the wrong file could only be removed for good (file.deleteFilesByIds)
    const deleted = await act('delete', up.statementId);
    t.same([deleted.ok, deleted.data?.status], [true, 'deleted']);
    release();
    await run;
    const after = await statementRow(
      up.statementId,
      'status, normalized_version AS v, normalized_key, status_before_delete AS before',
    );
    t.same(
      after,
      { status: 'deleted', v: 0, normalized_key: null, before: 'uploaded' },
      'the run committed nothing',
    );
    await removeJob(up.statementId);
    t.equal(
      (await act('restore', up.statementId)).data.status,
      'uploaded',
      'restored queued, not processing with no run',
    );
    t.equal(await queuedJobs(up.statementId), 1, 'a job is queued');
    t.equal(await ingest(up.statementId), 'processed');
    t.match(await record(up.statementId), {
      status: 'processed',
      keptRows: 1,
      netEarnings: '7.000000000000',
    });
  },
);

t.test(
  'deleted while queued, then restored: queued again at once (not left for the stranded-work recovery)',
  async (t) => {
    const up = await upload('restored.csv', '2024-09', '3.00');
    t.equal((await act('delete', up.statementId)).data.status, 'deleted');
    // its job runs meanwhile, finds it deleted, and ends
    t.equal(await ingest(up.statementId), 'skipped');
    await removeJob(up.statementId);
    t.equal((await act('restore', up.statementId)).data.status, 'uploaded');
    t.equal(await queuedJobs(up.statementId), 1, 'a job is queued');
    t.equal(await ingest(up.statementId), 'processed');
    // a restore to any other status queues nothing
    t.equal((await act('delete', up.statementId)).data.status, 'deleted');
    await removeJob(up.statementId);
    t.equal((await act('restore', up.statementId)).data.status, 'processed');
    t.equal(await queuedJobs(up.statementId), 0);
  },
);

t.test(
  'an announced size one PUT cannot carry (over 5 GiB) is refused before a URL is given',
  async (t) => {
    const start = (size: number) =>
      owner.client.mutate('upload.uploadFile', {
        organizationId: org,
        rightsholderId: artist,
        fileName: 'huge.csv',
        size,
      });
    isError(t, await start(5 * 1024 ** 3 + 1), 'BAD_REQUEST', 'VALIDATION_FAILED');
    isError(t, await start(10 * 1024 ** 3), 'BAD_REQUEST', 'VALIDATION_FAILED');
    isError(t, await start(0), 'BAD_REQUEST', 'VALIDATION_FAILED');
    isError(t, await start(1.5), 'BAD_REQUEST', 'VALIDATION_FAILED');
    const largest = await start(5 * 1024 ** 3);
    t.equal(largest.ok && largest.data.method, 'PUT');
  },
);

t.test(
  'skip and bad take a statement being processed, as reprocess and delete do: the run commits nothing',
  async (t) => {
    const gated = gatedRuns();
    // one processed before (its rows stay, out of analytics), sent back and skipped while it runs
    const up = await upload('skip-running.csv', '2023-01', '4.00', second);
    t.equal(await ingest(up.statementId), 'processed');
    const v1 = await statementRow(up.statementId, 'normalized_key, variants, located, header_hash');
    t.equal((await act('reprocess', up.statementId)).data.status, 'uploaded');
    let held = await gated.runHeld(up.statementId);
    t.equal((await record(up.statementId)).status, 'processing');
    const skipped = await act('skip', up.statementId);
    t.same([skipped.ok, skipped.data?.status], [true, 'skipped'], 'accepted (CONFLICT before)');
    held.release();
    t.equal((await held.run).status, 'skipped', 'the run ends without a commit');
    const after = await statementRow(
      up.statementId,
      'status, normalized_version AS v, normalized_key, variants, located, header_hash, progress_stage',
    );
    t.same(after, {
      status: 'skipped',
      v: 1,
      normalized_key: v1.normalized_key,
      variants: v1.variants,
      located: v1.located,
      header_hash: v1.header_hash,
      progress_stage: 'reading',
    });
    t.ok(await srv.deps.store.head(v1.normalized_key), 'the earlier rows are kept');
    t.notOk(
      await srv.deps.store.head(v1.normalized_key.replace('/v1.parquet', '/v2.parquet')),
      'the run wrote no version of its own',
    );
    t.match(await record(up.statementId), {
      status: 'skipped',
      keptRows: 1,
      netEarnings: '4.000000000000',
      failureReason: null,
      progress: { stage: null },
    });

    // one never read, marked bad while its first run reads it: nothing of the run is kept
    const bad = await upload('bad-running.csv', '2023-02', '5.00', second);
    held = await gated.runHeld(bad.statementId);
    const marked = await act('bad', bad.statementId);
    t.same([marked.ok, marked.data?.status], [true, 'bad'], 'accepted (CONFLICT before)');
    held.release();
    t.equal((await held.run).status, 'skipped');
    t.match(await record(bad.statementId), {
      status: 'bad',
      keptRows: null,
      netEarnings: null,
      layout: null,
      headerHash: null,
      failureReason: null,
    });
    t.same(await statementRow(bad.statementId, 'normalized_key, sha256'), {
      normalized_key: null,
      sha256: null,
    });

    // on an upload, the files being processed are set aside with the others
    const first = await upload('upload-a.csv', '2023-03', '1.00', second);
    const other = await upload('upload-b.csv', '2023-04', '2.00', second, {
      uploadId: first.uploadId,
    });
    t.equal(await ingest(other.statementId), 'processed');
    held = await gated.runHeld(first.statementId);
    const all = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'skip', uploadId: first.uploadId },
    });
    t.same(all.data.statementIds.toSorted(), [first.statementId, other.statementId].toSorted());
    held.release();
    t.equal((await held.run).status, 'skipped');
    t.same(
      all.data.items.map((s: any) => s.status),
      ['skipped', 'skipped'],
    );
    t.equal((await record(first.statementId)).status, 'skipped');
  },
);
