import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { encodingSchema, variablesSchema } from '../../ingest/mappingFields.ts';
import { namedEncoding } from '../../ingest/file/encoding.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope, storedId } from './shared.ts';

/** The largest object one PUT can write to S3 (5 GiB): the most a direct upload can announce. */
export const MAX_PUT_BYTES = 5 * 1024 ** 3;

/** How long a presigned PUT URL and an unfinished direct upload live without a heartbeat. */
export const UPLOAD_TTL_SECONDS = 15 * 60;

// a Map: a file named `x.constructor` must find no content type (an object finds Object's constructor)
const CONTENT_TYPES = new Map(
  Object.entries({
    csv: 'text/csv',
    tsv: 'text/tab-separated-values',
    txt: 'text/plain',
    xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    xls: 'application/vnd.ms-excel',
    gz: 'application/gzip',
    zip: 'application/zip',
  }),
);

/** An encoding named with an upload, as recorded; ENCODING_UNKNOWN when iconv-lite does not decode it. */
export function knownEncoding(name: string): string {
  const known = namedEncoding(name);
  if (known === null) throw new AppError('ENCODING_UNKNOWN', `The encoding "${name}" is not one the reader decodes (such as shift_jis, euc-jp, euc-kr, gb18030, big5, windows-1251, windows-1250, windows-1252, utf-8)`);
  return known;
}

/** The object key: chosen by the server inside the organization's prefix, never by the client. */
export function statementObjectKey(organizationId: string, statementId: string, fileName: string): string {
  const safe = fileName.normalize('NFKC').replace(/[^\w.\- ]+/g, '_').replace(/^[.\s]+/, '').slice(-120) || 'statement';
  return `orgs/${organizationId}/statements/${statementId}/original/${safe}`;
}

export const uploadFile = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Start a direct upload of one statement file of a rightsholder: creates (or adds to) an upload and a statement and returns a presigned PUT URL. PUT the bytes with exactly the returned headers, then call upload.uploadAction { type: "complete" }.',
  },
  orgInput({
    rightsholderId: z.uuid(),
    fileName: z.string().trim().min(1).max(255),
    contentType: z.string().trim().min(1).max(200).regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type').optional(),
    // one presigned PUT carries at most 5 GiB (S3's limit for a single PUT; larger needs a multipart upload)
    size: z.number().int().min(1).max(MAX_PUT_BYTES).optional(),
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).optional(),
    distributorId: z.uuid().optional(),
    customName: z.string().trim().min(1).max(200).optional(),
    uploadId: storedId().optional(),
    // values of the mapping's `variable` fields for this file (`{ "currency": "EUR" }`)
    variables: variablesSchema.optional(),
    // the file's text encoding when it is no UTF-8 and the reader's guess is wrong (`shift_jis`, `windows-1251`)
    encoding: encodingSchema.optional(),
  }),
).mutation(async ({ ctx, input }) => {
  const { pool, store } = ctx.deps;
  const encoding = input.encoding === undefined ? null : knownEncoding(input.encoding);
  const organizationId = ctx.org.id;
  const ext = input.fileName.toLowerCase().split('.').pop() ?? '';
  const contentType = input.contentType ?? CONTENT_TYPES.get(ext) ?? 'application/octet-stream';
  const created = await withTransaction(pool, async (db) => {
    const scope = await callerScope(db, { organizationId, userId: ctx.principal.userId });
    const rh = await db.query(
      `SELECT name FROM rightsholders WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL AND ($3::uuid[] IS NULL OR id = ANY ($3))`,
      [organizationId, input.rightsholderId, scope],
    );
    if (!rh.rows[0]) throw new AppError('RIGHTSHOLDER_NOT_FOUND');
    if (input.distributorId) {
      const d = await db.query('SELECT 1 FROM distributors WHERE id = $1 AND (organization_id = $2 OR organization_id IS NULL)', [input.distributorId, organizationId]);
      if (!d.rows[0]) throw new AppError('DISTRIBUTOR_NOT_FOUND');
    }
    let uploadId = input.uploadId;
    if (uploadId) {
      // an upload the caller may see: one they started, or one with a file of theirs (a member
      // restricted to some rightsholders does not add files to another's upload)
      const u = await db.query(
        `SELECT 1 FROM uploads u WHERE u.id = $1 AND u.organization_id = $2
           AND ($3::uuid[] IS NULL OR u.created_by = $4 OR EXISTS (SELECT 1 FROM statements s WHERE s.upload_id = u.id AND s.rightsholder_id = ANY ($3)))
         FOR UPDATE`,
        [uploadId, organizationId, scope, ctx.principal.userId],
      );
      if (!u.rows[0]) throw new AppError('UPLOAD_NOT_FOUND');
      await db.query('UPDATE uploads SET updated_at = clock_timestamp() WHERE id = $1', [uploadId]);
    } else {
      const u = await db.query<{ id: string }>('INSERT INTO uploads (organization_id, created_by) VALUES ($1, $2) RETURNING id', [
        organizationId,
        ctx.principal.userId,
      ]);
      uploadId = u.rows[0]!.id;
    }
    const id = (await db.query<{ id: string }>('SELECT gen_random_uuid() AS id')).rows[0]!.id;
    const key = statementObjectKey(organizationId, id, input.fileName);
    const s = await db.query<{ expiresAt: Date }>(
      `INSERT INTO statements (id, organization_id, upload_id, rightsholder_id, distributor_id, custom_name, file_name, content_type,
         declared_size, declared_sha256, object_key, status, upload_expires_at, put_url_expires_at, created_by, variables, encoding)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'uploading', clock_timestamp() + make_interval(secs => $12),
         clock_timestamp() + make_interval(secs => $12), $13, $14, $15)
       RETURNING upload_expires_at AS "expiresAt"`,
      [id, organizationId, uploadId, input.rightsholderId, input.distributorId ?? null, input.customName ?? null, input.fileName, contentType,
        input.size ?? null, input.sha256?.toLowerCase() ?? null, key, UPLOAD_TTL_SECONDS, ctx.principal.userId, JSON.stringify(input.variables ?? {}), encoding],
    );
    await recordActivity(db, ctx.principal, {
      organizationId,
      action: 'upload.uploadFile',
      subjectType: 'upload',
      subjectId: uploadId,
      subjectLabel: input.fileName,
      changes: { statementId: { before: null, after: id } },
    });
    return { uploadId, statementId: id, key, expiresAt: s.rows[0]!.expiresAt };
  });
  // a declared size is signed too: a PUT of another length is refused by the store
  const url = await store.presignPut(created.key, contentType, UPLOAD_TTL_SECONDS, input.size);
  return {
    uploadId: created.uploadId,
    statementId: created.statementId,
    url,
    method: 'PUT' as const,
    headers: { 'content-type': contentType },
    expiresAt: created.expiresAt,
  };
});
