import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { encodingSchema, variablesSchema } from '../../ingest/mappingFields.ts';
import { namedEncoding } from '../../ingest/file/encoding.ts';
import {
  createUpload,
  distributorUsable,
  insertUploadingStatement,
  lockUploadForAdding,
  newStatementId,
  rightsholderVisible,
  touchUpload,
  type VisibleTo,
} from '../../ingest/uploadStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from './inputs.ts';

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
    pdf: 'application/pdf',
  }),
);

/** An encoding named with an upload, as recorded; ENCODING_UNKNOWN when iconv-lite does not decode it. */
export function knownEncoding(name: string): string {
  const known = namedEncoding(name);
  if (known === null)
    throw new AppError(
      'ENCODING_UNKNOWN',
      `The encoding "${name}" is not one the reader decodes (such as shift_jis, euc-jp, euc-kr, gb18030, big5, windows-1251, windows-1250, windows-1252, utf-8)`,
    );
  return known;
}

/** The object key: chosen by the server inside the organization's prefix, never by the client. */
export function statementObjectKey(
  organizationId: string,
  statementId: string,
  fileName: string,
): string {
  const safe =
    fileName
      .normalize('NFKC')
      .replace(/[^\w.\- ]+/g, '_')
      .replace(/^[.\s]+/, '')
      .slice(-120) || 'statement';
  return `orgs/${organizationId}/statements/${statementId}/original/${safe}`;
}

/** The upload the file goes into: the one named, if the caller may add to it (locked), else a new one. */
async function uploadToAddTo(
  db: Queryable,
  org: VisibleTo,
  userId: string,
  uploadId: string | undefined,
): Promise<string> {
  if (uploadId === undefined) return createUpload(db, org.id, userId);
  if (!(await lockUploadForAdding(db, org, uploadId, userId)))
    throw new AppError('UPLOAD_NOT_FOUND');
  await touchUpload(db, uploadId);
  return uploadId;
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
    contentType: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type')
      .optional(),
    // one presigned PUT carries at most 5 GiB (S3's limit for a single PUT; larger needs a multipart upload)
    size: z.number().int().min(1).max(MAX_PUT_BYTES).optional(),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/)
      .optional(),
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
    if (!(await rightsholderVisible(db, ctx.org, input.rightsholderId)))
      throw new AppError('RIGHTSHOLDER_NOT_FOUND');
    if (input.distributorId && !(await distributorUsable(db, organizationId, input.distributorId)))
      throw new AppError('DISTRIBUTOR_NOT_FOUND');
    const uploadId = await uploadToAddTo(db, ctx.org, ctx.principal.userId, input.uploadId);
    const id = await newStatementId(db);
    const key = statementObjectKey(organizationId, id, input.fileName);
    const expiresAt = await insertUploadingStatement(
      db,
      {
        id,
        organizationId,
        uploadId,
        rightsholderId: input.rightsholderId,
        distributorId: input.distributorId ?? null,
        customName: input.customName ?? null,
        fileName: input.fileName,
        contentType,
        declaredSize: input.size ?? null,
        declaredSha256: input.sha256?.toLowerCase() ?? null,
        objectKey: key,
        createdBy: ctx.principal.userId,
        variables: input.variables ?? {},
        encoding,
      },
      UPLOAD_TTL_SECONDS,
    );
    await recordActivity(db, ctx.principal, {
      organizationId,
      action: 'upload.uploadFile',
      subjectType: 'upload',
      subjectId: uploadId,
      subjectLabel: input.fileName,
      changes: { statementId: { before: null, after: id } },
    });
    return { uploadId, statementId: id, key, expiresAt };
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
