// upload.uploadAction "acts on an upload or statement": with action.uploadId the action applies to
// every file of the upload whose status allows it, in one transaction.
import t from 'tap';
import { createRightsholder } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Action Label');
const org = owner.organizationId;
const other = await newOrganization(srv, 'Other Label');
const artist = await createRightsholder(owner.client, org, 'Action Artist');
const second = await createRightsholder(owner.client, org, 'Second Artist');

/** A file of the upload (a new one without uploadId), its bytes PUT unless `put` is false. */
async function addFile(
  fileName: string,
  opts: { uploadId?: string; rightsholderId?: string; put?: boolean } = {},
) {
  const bytes = Buffer.from('Period,Net\n2024-03,1.00\n');
  const res = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: opts.rightsholderId ?? artist,
    fileName,
    size: bytes.length,
    ...(opts.uploadId ? { uploadId: opts.uploadId } : {}),
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  if (opts.put !== false) {
    const put = await fetch(res.data.url, {
      method: 'PUT',
      headers: res.data.headers,
      body: bytes,
    });
    if (put.status !== 200) throw new Error(`PUT ${put.status}`);
  }
  return res.data as { uploadId: string; statementId: string };
}

const act = (caller: typeof owner, action: Record<string, unknown>) =>
  caller.client.mutateUnchecked('upload.uploadAction', {
    organizationId: caller.organizationId,
    action,
  });
const statuses = async (uploadId: string) => {
  const res = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { uploadId, includeDeleted: true },
    pagination: { page: 1, sortBy: 'fileName' },
  });
  return res.data.items.map((s: any) => [s.fileName, s.status]);
};

t.test('an action on an upload applies to each of its files that can take it', async (t) => {
  const a = await addFile('a.csv');
  const b = await addFile('b.csv', { uploadId: a.uploadId });
  const done = await act(owner, { type: 'complete', uploadId: a.uploadId });
  t.equal(done.ok, true);
  t.same(done.data?.uploadId, a.uploadId);
  t.same(done.data?.statementIds, [a.statementId, b.statementId]);
  t.same(
    done.data?.items.map((s: any) => [s.id, s.status]),
    [
      [a.statementId, 'uploaded'],
      [b.statementId, 'uploaded'],
    ],
  );
  const queued = await srv.deps.pool.query(
    `SELECT key FROM graphile_worker.jobs WHERE task_identifier = 'statement_ingest' AND key = ANY ($1) ORDER BY key`,
    [[`statement_ingest:${a.statementId}`, `statement_ingest:${b.statementId}`]],
  );
  t.equal(queued.rows.length, 2, 'both queued for processing');

  // delete one file, then the upload: only the one still live can take it
  t.equal(
    (await act(owner, { type: 'delete', statementId: a.statementId })).data?.status,
    'deleted',
  );
  const deleted = await act(owner, { type: 'delete', uploadId: a.uploadId });
  t.same(deleted.data?.statementIds, [b.statementId]);
  t.same(await statuses(a.uploadId), [
    ['a.csv', 'deleted'],
    ['b.csv', 'deleted'],
  ]);
  t.same((await act(owner, { type: 'restore', uploadId: a.uploadId })).data?.statementIds, [
    a.statementId,
    b.statementId,
  ]);
  t.same(await statuses(a.uploadId), [
    ['a.csv', 'uploaded'],
    ['b.csv', 'uploaded'],
  ]);
  isError(
    t,
    await act(owner, { type: 'restore', uploadId: a.uploadId }),
    'CONFLICT',
    'STATEMENT_STATE_CONFLICT',
  );
});

t.test(
  'completing an upload needs every file that can take it to be there; else nothing changes',
  async (t) => {
    const a = await addFile('here.csv');
    await addFile('missing.csv', { uploadId: a.uploadId, put: false });
    isError(
      t,
      await act(owner, { type: 'complete', uploadId: a.uploadId }),
      'BAD_REQUEST',
      'UPLOAD_OBJECT_MISSING',
    );
    t.same(await statuses(a.uploadId), [
      ['here.csv', 'uploading'],
      ['missing.csv', 'uploading'],
    ]);
  },
);

t.test('unknown, foreign and invisible uploads; input', async (t) => {
  const a = await addFile('mine.csv');
  isError(
    t,
    await act(owner, { type: 'skip', uploadId: other.userId }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  isError(
    t,
    await act(other, { type: 'skip', uploadId: a.uploadId }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  const restricted = await addMember(srv, org, 'writer');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [second]],
  );
  isError(
    t,
    await act(restricted, { type: 'delete', uploadId: a.uploadId }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  // a restricted writer acts only on the files they may see
  const theirs = await addFile('theirs.csv', { uploadId: a.uploadId, rightsholderId: second });
  t.same((await act(restricted, { type: 'delete', uploadId: a.uploadId })).data?.statementIds, [
    theirs.statementId,
  ]);
  t.same(await statuses(a.uploadId), [
    ['mine.csv', 'uploading'],
    ['theirs.csv', 'deleted'],
  ]);
  isError(
    t,
    await act(owner, { type: 'skip', uploadId: a.uploadId, statementId: a.statementId }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(t, await act(owner, { type: 'skip' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
