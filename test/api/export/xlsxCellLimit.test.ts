// A text longer than an Excel cell holds (32,767 characters) fails an XLSX export with its own
// errorCode, writing nothing, rather than a workbook Excel cuts or "repairs"; the same export as
// CSV keeps the whole text.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { HEADER, fields } from '../../helpers/sampleMapping.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, records, runExport } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Long Text Org');
const org = owner.organizationId;
const rightsholderId = await createRightsholder(owner.client, org, 'Long Titles');
await insertMapping(srv.deps.pool, org, 'Long text layout', HEADER, fields);
const long = `Long ${'x'.repeat(40_000)}`;
const csv = [HEADER.join(','), `2024-03,${long},USD,1,2.50`, '2024-03,Short,USD,2,1.25'].join('\n');
const up = await putFile(owner.client, org, rightsholderId, 'long.csv', Buffer.from(`${csv}\n`));

t.test('XLSX: EXPORT_XLSX_CELL_TOO_LONG, no file; CSV: the whole text', async (t) => {
  t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
  const xlsx = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'xlsx',
    rightsholderIds: [rightsholderId],
  });
  t.match(xlsx, { status: 'failed', errorCode: 'EXPORT_XLSX_CELL_TOO_LONG' });
  t.match(xlsx.reason, /40005 characters, more than the 32767/);
  const objects = await srv.deps.store.client.send(
    new ListObjectsV2Command({
      Bucket: srv.deps.store.bucket,
      Prefix: `orgs/${org}/exports/${xlsx.id}/`,
    }),
  );
  t.same(objects.Contents ?? [], [], 'nothing stored');
  const csvDone = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: [rightsholderId],
  });
  t.equal(csvDone.status, 'completed');
  const files = await downloadAll(owner.client, org, csvDone.id);
  const rows = records(await Promise.all(files.map((f) => readTable('csv', f.bytes))));
  t.same(rows.map((r) => r.track_title_raw?.length).sort(), [40_005, 5]);
});
