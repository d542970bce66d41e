// rightsholder.deleteById against a statement being added to the rightsholder at the same moment
// (upload.uploadFile, in its transaction): the statement goes with the rightsholder, and so must
// its object in the store. The adding transaction is held open here with the insert
// upload.uploadFile runs (its foreign key holds the rightsholder), so the interleaving is the
// test's: the delete waits for it, then removes the new statement and its file.
import t from 'tap';
import { waitForLockWaiters } from '../../helpers/locks.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder } from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Race Label');
const org = owner.organizationId;
const db = srv.deps.pool;

t.test('a statement added while its rightsholder is deleted leaves no object behind', async (t) => {
  const r = await createRightsholder(t, owner, 'Doomed Artist');
  const first = ok(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: r.id,
      fileName: 'first.csv',
    }),
  );
  const firstKey = (
    await db.query<{ key: string }>('SELECT object_key AS key FROM statements WHERE id = $1', [
      first.statementId,
    ])
  ).rows[0]!.key;
  await srv.deps.store.put(firstKey, 'a,b\n1,2\n');
  const secondKey = `orgs/${org}/statements/race/original/second.csv`;
  const adding = await db.connect();
  let removed;
  try {
    await adding.query('BEGIN');
    await adding.query(
      `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status, upload_expires_at, put_url_expires_at, created_by)
       VALUES ($1, $2, $3, 'second.csv', 'text/csv', $4, 'uploading', now() + interval '15 minutes', now() + interval '15 minutes', $5)`,
      [org, first.uploadId, r.id, secondKey, owner.userId],
    );
    await srv.deps.store.put(secondKey, 'c,d\n3,4\n');
    const deleting = owner.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: r.id,
    });
    // the delete is under way, waiting for the adding transaction's hold on the rightsholder
    await waitForLockWaiters(db, 1);
    await adding.query('COMMIT');
    removed = ok(t, await deleting);
  } finally {
    adding.release();
  }
  t.equal(removed.removed.statements, 2, 'both statements went with the rightsholder');
  t.equal(
    (await db.query('SELECT 1 FROM statements WHERE rightsholder_id = $1', [r.id])).rowCount,
    0,
  );
  t.equal(await srv.deps.store.head(firstKey), undefined, 'the first file is gone');
  t.equal(await srv.deps.store.head(secondKey), undefined, 'and the one added meanwhile');
});
