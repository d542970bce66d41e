// file.deleteFilesByIds removes an upload left without files; a file being added to that upload at
// the same moment (upload.uploadFile, in its transaction) must not go with it. The adding
// transaction is held open here with the statements upload.uploadFile runs, so the interleaving is
// the test's: the delete waits for it and then keeps the upload and its new file.
import t from 'tap';
import { createRightsholder } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Delete Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Delete Artist');

t.test(
  'a file added while the last file of its upload is deleted stays, with the upload',
  async (t) => {
    const first = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'first.csv',
    });
    const uploadId: string = first.data.uploadId;
    const adding = await srv.deps.pool.connect();
    let added = '';
    try {
      await adding.query('BEGIN');
      await adding.query(
        'SELECT 1 FROM uploads WHERE id = $1 AND organization_id = $2 FOR UPDATE',
        [uploadId, org],
      );
      await adding.query('UPDATE uploads SET updated_at = clock_timestamp() WHERE id = $1', [
        uploadId,
      ]);
      const ins = await adding.query<{ id: string }>(
        `INSERT INTO statements (organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status, upload_expires_at, put_url_expires_at, created_by)
       VALUES ($1, $2, $3, 'second.csv', 'text/csv', $4, 'uploading', now() + interval '15 minutes', now() + interval '15 minutes', $5) RETURNING id`,
        [org, uploadId, artist, `orgs/${org}/statements/x/original/second.csv`, owner.userId],
      );
      added = ins.rows[0]!.id;
      const deleting = owner.client.mutate('file.deleteFilesByIds', {
        organizationId: org,
        uploadId,
        fileIds: [first.data.statementId],
      });
      // the delete is under way, waiting for the adding transaction
      await new Promise((r) => setTimeout(r, 500));
      await adding.query('COMMIT');
      const res = await deleting;
      t.same(res.data?.deleted, [first.data.statementId]);
    } finally {
      adding.release();
    }
    const left = await srv.deps.pool.query('SELECT id FROM statements WHERE upload_id = $1', [
      uploadId,
    ]);
    t.same(
      left.rows.map((r) => r.id),
      [added],
      'the added file stays',
    );
    const upload = await srv.deps.pool.query('SELECT 1 FROM uploads WHERE id = $1', [uploadId]);
    t.equal(upload.rowCount, 1, 'and its upload');
  },
);
