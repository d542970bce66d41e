// upload.callback: releasing statements that wait for a mapping, or setting them aside, by file,
// by upload or by the mapping's header hash; an upload the caller cannot see is not found, and a
// statement set aside that still had rows from an earlier run takes its catalog along.
import t from 'tap';
import { createRightsholder, insertMapping, putFile } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { ingestStatement } from '../../../src/ingest/pipeline.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Callback Label');
const org = owner.organizationId;
const other = await newOrganization(srv, 'Other Label');
const artist = await createRightsholder(owner.client, org, 'Callback Artist');

const refreshes = async () =>
  (
    await db.query(
      `SELECT j.payload->>'reason' AS reason FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
       WHERE k.identifier = 'catalog_block_refresh' AND j.payload->>'rightsholderId' = $1`,
      [artist],
    )
  ).rows.map((r) => r.reason);

t.test(
  'a statement with rows that waits for a mapping, marked bad: out of analytics, its catalog refreshed',
  async (t) => {
    const first = await insertMapping(db, org, 'First layout', EUR_REPORT_HEADER, eurReportFields);
    const up = await putFile(
      owner.client,
      org,
      artist,
      'kept.csv',
      // its stated total is not its rows' sum: without a stored mapping none can be proven
      Buffer.from(
        `${EUR_REPORT_HEADER.join(',')}\n2024-03,Spotify,Song,USRC12400001,US,1,2.50\nTotal,,,,,,2.40\n`,
      ),
    );
    t.equal((await ingestStatement(srv.deps, org, up.statementId)).status, 'processed');
    t.same(await refreshes(), ['statement.processed']);
    // its mapping goes; processed again, it waits for one, its rows still read
    const removed = await owner.client.mutate('mapping.deleteById', {
      organizationId: org,
      id: first,
    });
    t.equal(removed.ok, true, JSON.stringify(removed.error ?? ''));
    await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId },
    });
    t.equal((await ingestStatement(srv.deps, org, up.statementId)).status, 'needs_mapping');
    const second = await insertMapping(
      db,
      org,
      'Second layout',
      EUR_REPORT_HEADER,
      eurReportFields,
    );
    await db.query(
      `DELETE FROM graphile_worker._private_jobs WHERE task_id IN (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'catalog_block_refresh')`,
    );
    const res = await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'review',
      mapping_id: second,
      file_id: up.statementId,
      action: 'bad',
    });
    t.same(res.data, { statementIds: [up.statementId], status: 'bad' });
    t.same(await refreshes(), ['upload.callback.bad'], 'the catalog block follows');
  },
);

t.test('an upload of another organization, or none, is not found', async (t) => {
  const mapping = await insertMapping(db, org, 'Third layout', ['A', 'B'], eurReportFields);
  isError(
    t,
    await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'x',
      mapping_id: mapping,
      upload_id: other.userId,
    }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  const foreign = await other.client.mutate('upload.uploadFile', {
    organizationId: other.organizationId,
    rightsholderId: await createRightsholder(other.client, other.organizationId, 'F'),
    fileName: 'f.csv',
  });
  isError(
    t,
    await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'x',
      mapping_id: mapping,
      upload_id: foreign.data.uploadId,
    }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  // one of ours with nothing waiting: nothing released
  const mine = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'm.csv',
  });
  const res = await owner.client.mutate('upload.callback', {
    organizationId: org,
    type: 'x',
    mapping_id: mapping,
    upload_id: mine.data.uploadId,
  });
  t.same(res.data, { statementIds: [], status: 'queued' });
});

t.test(
  'file_id with the upload_id of another upload: not found there, not "not waiting"',
  async (t) => {
    const header = ['Left', 'Right'];
    const waiting = await putFile(
      owner.client,
      org,
      artist,
      'waits.csv',
      Buffer.from('Left,Right\n1,2\n'),
    );
    t.equal((await ingestStatement(srv.deps, org, waiting.statementId)).status, 'needs_mapping');
    const again = await insertMapping(db, org, 'Fourth layout', header, eurReportFields);
    const elsewhere = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'elsewhere.csv',
    });
    const wrong = await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'x',
      mapping_id: again,
      file_id: waiting.statementId,
      upload_id: elsewhere.data.uploadId,
    });
    isError(t, wrong, 'NOT_FOUND', 'STATEMENT_NOT_FOUND');
    t.equal(wrong.error?.message, 'No statement with that file_id in that upload');
    // in its own upload it is released
    const right = await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'x',
      mapping_id: again,
      file_id: waiting.statementId,
      upload_id: waiting.uploadId,
    });
    t.same(right.data, { statementIds: [waiting.statementId], status: 'queued' });
  },
);
