// The date range filters of upload.list (date_start, date_end) and file.list (dateStart, dateEnd):
// a calendar date covers its whole day, an ISO date-time is that instant, with its offset.
import t from 'tap';
import { createRightsholder } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Dates Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Dates Artist');

/** An upload with one file, both created at `at`. */
async function uploadAt(
  fileName: string,
  at: string,
): Promise<{ uploadId: string; statementId: string }> {
  const res = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  await srv.deps.pool.query('UPDATE uploads SET created_at = $2 WHERE id = $1', [
    res.data.uploadId,
    at,
  ]);
  await srv.deps.pool.query('UPDATE statements SET created_at = $2 WHERE id = $1', [
    res.data.statementId,
    at,
  ]);
  return res.data;
}

const morning = await uploadAt('morning.csv', '2024-05-10T08:00:00Z');
const evening = await uploadAt('evening.csv', '2024-05-10T20:00:00Z');
await uploadAt('next-day.csv', '2024-05-11T08:00:00Z');

const uploads = async (filter: Record<string, string>) => {
  const res = await owner.client.query('upload.list', {
    organizationId: org,
    filter,
    pagination: { page: 1, sortOrder: 'asc' },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data.map((u: any) => u.id);
};
const files = async (filters: Record<string, string>) => {
  const res = await owner.client.query('file.list', { organizationId: org, filters });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data.map((f: any) => f.id);
};

t.test('upload.list: dates cover whole days, date-times are instants', async (t) => {
  t.same(await uploads({ date_start: '2024-05-10', date_end: '2024-05-10' }), [
    morning.uploadId,
    evening.uploadId,
  ]);
  t.same(
    await uploads({ date_end: '2024-05-10T12:00:00Z' }),
    [morning.uploadId],
    'nothing after noon',
  );
  t.same(
    await uploads({ date_end: '2024-05-10T10:00:00+02:00' }),
    [morning.uploadId],
    'an end at the very instant is included',
  );
  t.same(await uploads({ date_start: '2024-05-10T12:00:00Z', date_end: '2024-05-10T23:00:00Z' }), [
    evening.uploadId,
  ]);
});

t.test('file.list: dates cover whole days, date-times are instants', async (t) => {
  t.same(await files({ dateStart: '2024-05-10', dateEnd: '2024-05-10' }), [
    morning.statementId,
    evening.statementId,
  ]);
  t.same(await files({ dateStart: '2024-05-10T12:00:00Z', dateEnd: '2024-05-10T23:59:59Z' }), [
    evening.statementId,
  ]);
  t.same(
    await files({ dateStart: '2024-05-10T21:00:00+02:00', dateEnd: '2024-05-10' }),
    [evening.statementId],
    'the offset counts',
  );
  t.same(await files({ dateStart: '2024-05-10', dateEnd: '2024-05-10T12:00:00Z' }), [
    morning.statementId,
  ]);
});
