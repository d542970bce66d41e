// A presigned PUT URL cannot be revoked: a statement deleted while one of its URLs still works
// (file.deleteFilesByIds, a rightsholder's deletion) may still have its object written afterwards,
// under a key no record points at. Its deletion records the key (object_sweeps), and the minute
// job removes the object once the URL is dead; nothing is left in the organization's prefix.
import t from 'tap';
import { statementObjectKey } from '../../src/api/upload/uploadFile.ts';
import { sweepAbandonedObjects } from '../../src/jobs/tasks/statement_upload_expire.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Orphan Org');
const org = owner.organizationId;
const swept = async () =>
  (await srv.deps.pool.query('SELECT object_key FROM object_sweeps ORDER BY object_key')).rows.map(
    (r) => r.object_key as string,
  );

async function startUpload(rightsholderId: string, fileName: string) {
  const up = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId,
    fileName,
  });
  if (!up.ok) throw new Error(JSON.stringify(up.error));
  return {
    ...(up.data as {
      uploadId: string;
      statementId: string;
      url: string;
      headers: Record<string, string>;
    }),
    key: statementObjectKey(org, up.data.statementId, fileName),
  };
}

t.test(
  'a PUT after file.deleteFilesByIds or a rightsholder deletion is swept once its URL is dead',
  async (t) => {
    const rh = await owner.client.mutate('rightsholder.create', {
      organizationId: org,
      name: 'Artist',
    });
    const gone = await owner.client.mutate('rightsholder.create', {
      organizationId: org,
      name: 'Departing Artist',
    });
    const a = await startUpload(rh.data.id, 'statement.csv');
    const b = await startUpload(gone.data.id, 'other.csv');

    t.equal(
      (
        await owner.client.mutate('file.deleteFilesByIds', {
          organizationId: org,
          uploadId: a.uploadId,
          fileIds: [a.statementId],
        })
      ).ok,
      true,
    );
    t.equal(
      (
        await owner.client.mutate('rightsholder.deleteById', {
          organizationId: org,
          id: gone.data.id,
        })
      ).ok,
      true,
    );
    t.same(await swept(), [a.key, b.key].sort(), 'both keys wait for their URLs to die');

    // the client (or anyone holding the URL: a removed member, a log line) PUTs afterwards
    for (const u of [a, b])
      t.equal(
        (
          await fetch(u.url, {
            method: 'PUT',
            headers: u.headers,
            body: 'isrc,amount\nSENSITIVE,1\n',
          })
        ).status,
        200,
      );
    t.equal(await sweepAbandonedObjects(srv.deps), 0, 'not while the URLs live');
    t.ok(await srv.deps.store.head(a.key));

    await srv.deps.pool.query(
      `UPDATE object_sweeps SET delete_after = now() - interval '1 second'`,
    );
    t.equal(await sweepAbandonedObjects(srv.deps), 2);
    t.equal(
      await srv.deps.store.head(a.key),
      undefined,
      'no object remains under a deleted statement',
    );
    t.equal(await srv.deps.store.head(b.key), undefined, "nor under a deleted rightsholder's");
    t.same(await swept(), [], 'each swept once');
  },
);

t.test('a statement deleted after its URLs died leaves nothing to sweep', async (t) => {
  const rh = await owner.client.mutate('rightsholder.create', {
    organizationId: org,
    name: 'Old Artist',
  });
  const c = await startUpload(rh.data.id, 'old.csv');
  await srv.deps.pool.query(
    `UPDATE statements SET put_url_expires_at = now() - interval '1 hour' WHERE id = $1`,
    [c.statementId],
  );
  t.equal(
    (
      await owner.client.mutate('file.deleteFilesByIds', {
        organizationId: org,
        uploadId: c.uploadId,
        fileIds: [c.statementId],
      })
    ).ok,
    true,
  );
  t.same(await swept(), []);
});
