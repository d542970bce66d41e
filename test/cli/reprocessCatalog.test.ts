// `admin reprocess` of skipped or bad statements: their processed rows count again at once in
// analytics (whatever the run ends in), so their rightsholders' catalogs are refreshed, as
// upload.uploadAction reprocess does.
import t from 'tap';
import { BLOCK_REFRESH_TASK } from '../../src/catalog/blocks.ts';
import { queueReprocess } from '../../src/cli/reprocess.ts';
import { ingestStatement } from '../../src/ingest/pipeline.ts';
import { createRightsholder, insertMapping, putFile } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../helpers/sampleMapping.ts';
import { startTestServer } from '../helpers/server.ts';

// no job runner: the queued jobs stay in the table for the test to read
const srv = await startTestServer(t, { role: 'api' });
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Catalog Reprocess Label');
const org = owner.organizationId;
const skippedArtist = await createRightsholder(owner.client, org, 'Skipped Artist');
const badArtist = await createRightsholder(owner.client, org, 'Bad Artist');
const processedArtist = await createRightsholder(owner.client, org, 'Processed Artist');
await insertMapping(db, org, 'Catalog layout', EUR_REPORT_HEADER, eurReportFields);
const csv = (net: string) =>
  Buffer.from(`${EUR_REPORT_HEADER.join(',')}\n2024-03,Spotify,Song,USRC12400001,US,1,${net}\n`);

async function processed(rightsholderId: string, net: string, action?: 'skip' | 'bad') {
  const up = await putFile(owner.client, org, rightsholderId, `${net}.csv`, csv(net));
  t.equal((await ingestStatement(srv.deps, org, up.statementId)).status, 'processed');
  if (action)
    t.equal(
      (
        await owner.client.mutate('upload.uploadAction', {
          organizationId: org,
          action: { type: action, statementId: up.statementId },
        })
      ).ok,
      true,
    );
  return up.statementId;
}
const refreshes = async () =>
  (
    await db.query<{ key: string }>(
      `SELECT key FROM graphile_worker.jobs WHERE task_identifier = $1 ORDER BY key`,
      [BLOCK_REFRESH_TASK],
    )
  ).rows.map((r) => r.key);

t.test(
  'a skipped or bad statement sent back refreshes its rightsholder catalog; a processed one waits for its run',
  async (t) => {
    const skipped = await processed(skippedArtist, '1.00', 'skip');
    const bad = await processed(badArtist, '2.00', 'bad');
    const kept = await processed(processedArtist, '3.00');
    await db.query(
      'SELECT graphile_worker.remove_job(key) FROM graphile_worker.jobs WHERE task_identifier = $1',
      [BLOCK_REFRESH_TASK],
    );
    t.same(await refreshes(), [], 'the refreshes of the skip and the bad removed');
    const ids = await queueReprocess(srv.deps, {
      organizationId: org,
      statuses: ['skipped', 'bad', 'processed'],
    });
    t.same(ids, [skipped, bad, kept].sort());
    t.same(
      await refreshes(),
      [`${BLOCK_REFRESH_TASK}:${badArtist}`, `${BLOCK_REFRESH_TASK}:${skippedArtist}`].sort(),
    );
    // the run then fails (its file is gone): the rows of the earlier version count, with the catalog refreshed
    const { rows } = await db.query<{ object_key: string }>(
      'SELECT object_key FROM statements WHERE id = $1',
      [skipped],
    );
    await srv.deps.store.delete(rows[0]!.object_key);
    t.equal((await ingestStatement(srv.deps, org, skipped)).status, 'failed');
    const after = await db.query(
      'SELECT status, net_earnings::text AS net FROM statements WHERE id = $1',
      [skipped],
    );
    t.same(after.rows[0], { status: 'failed', net: '1.000000000000' });
  },
);
