// Ids sent in capitals name the same rows as the stored (lower-case) ids: the upload and file
// procedures that compare or echo ids answer as for the stored form.
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Capitals Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Capitals Artist');
await insertMapping(srv.deps.pool, org, 'Capitals layout', EUR_REPORT_HEADER, eurReportFields);
const csv = (rows: string[][]) =>
  Buffer.from([EUR_REPORT_HEADER, ...rows].map((r) => r.join(',')).join('\n') + '\n');
// one row whose amount cannot be read: an invalid_amounts flag
const up = await putFile(
  owner.client,
  org,
  artist,
  'capitals.csv',
  csv([
    ['2024-03', 'Spotify', 'Song', 'USRC12400001', 'US', '1', '1.00'],
    ['2024-03', 'Spotify', 'Song', 'USRC12400001', 'US', '1', 'abc'],
  ]),
);
const processed = await waitForStatement(owner.client, org, up.statementId);
const UP = (id: string) => id.toUpperCase();

t.test('heartbeat: an upload named in capitals is extended, and answered by its id', async (t) => {
  const start = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'later.csv',
  });
  const id = start.data.statementId as string;
  // a file added to an upload named in capitals: the answer names the stored upload id
  const added = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'added.csv',
    uploadId: UP(start.data.uploadId),
  });
  t.equal(added.data.uploadId, start.data.uploadId);
  const beat = await owner.client.mutate('upload.heartbeat', {
    organizationId: org,
    statementIds: [UP(id), id],
  });
  // before: extended in the database, yet answered notExtended, with no fresh URL
  t.same(beat.data.notExtended, []);
  t.same(
    beat.data.extended.map((e: any) => [e.statementId, e.method]),
    [[id, 'PUT']],
  );
  const stranger = '00000000-0000-4000-8000-00000000ABCD';
  t.same(
    (
      await owner.client.mutate('upload.heartbeat', {
        organizationId: org,
        statementIds: [stranger],
      })
    ).data,
    { extended: [], notExtended: [stranger.toLowerCase()] },
  );
});

t.test('flags: the statement named by its upload in capitals', async (t) => {
  const flag = processed.flags.find((f: any) => f.kind === 'invalid_amounts');
  t.ok(flag, 'an invalid_amounts flag');
  const shown = await owner.client.mutate('upload.setFlagShown', {
    organizationId: org,
    uploadId: UP(up.uploadId),
    statementId: UP(up.statementId),
    flagId: UP(flag.id),
    shown: false,
  });
  t.equal(shown.ok, true, 'before: STATEMENT_NOT_FOUND');
  t.equal(shown.data.flags.find((f: any) => f.id === flag.id).shown, false);
  const one = await owner.client.mutate('upload.resolveFlag', {
    organizationId: org,
    uploadId: UP(up.uploadId),
    statementId: up.statementId,
    flagId: flag.id,
  });
  t.equal(one.data.flags.find((f: any) => f.id === flag.id).resolved, true);
  const all = await owner.client.mutate('upload.resolveAllFlags', {
    organizationId: org,
    uploadId: UP(up.uploadId),
    statementId: UP(up.statementId),
  });
  t.same(
    all.data.flags.map((f: any) => f.resolved),
    processed.flags.map(() => true),
  );
  // another upload's id is still not this statement's
  const other = await putFile(
    owner.client,
    org,
    artist,
    'other.csv',
    csv([['2024-04', 'Spotify', 'Song', 'USRC12400001', 'US', '1', '2.00']]),
  );
  isError(
    t,
    await owner.client.mutate('upload.resolveAllFlags', {
      organizationId: org,
      uploadId: UP(other.uploadId),
      statementId: up.statementId,
    }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
});

t.test('uploadAction by upload: the answer names the stored ids', async (t) => {
  const res = await owner.client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type: 'skip', uploadId: UP(up.uploadId) },
  });
  t.same(
    [res.data.uploadId, res.data.statementIds, res.data.items.map((i: any) => i.status)],
    [up.uploadId, [up.statementId], ['skipped']],
  );
  const one = await owner.client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type: 'bad', statementId: UP(up.statementId) },
  });
  t.same([one.data.id, one.data.status], [up.statementId, 'bad']);
});

t.test('file.getFilesDeleteInfo and deleteFilesByIds: files named in capitals', async (t) => {
  const info = await owner.client.query('file.getFilesDeleteInfo', {
    organizationId: org,
    uploadId: UP(up.uploadId),
    fileIds: [UP(up.statementId)],
  });
  t.equal(info.ok, true, 'before: STATEMENT_NOT_FOUND');
  t.same(
    [info.data.files.map((f: any) => f.id), info.data.totals.files, info.data.totals.rows],
    [[up.statementId], 1, 2],
  );
  // the same file twice, in both cases, is one file
  const gone = await owner.client.mutate('file.deleteFilesByIds', {
    organizationId: org,
    uploadId: UP(up.uploadId),
    fileIds: [UP(up.statementId), up.statementId],
  });
  t.same(gone.data.deleted, [up.statementId]);
  t.equal(gone.data.objectsFailed, 0);
  t.same(
    (
      await owner.client.mutate('upload.statements', {
        organizationId: org,
        filter: { statementIds: [up.statementId], includeDeleted: true },
      })
    ).data.items,
    [],
  );
});
