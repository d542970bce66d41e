import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { enqueueBlockRefresh } from '../../catalog/blocks.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { encodingSchema, variablesSchema } from '../../ingest/mappingFields.ts';
import { knownEncoding } from './uploadFile.ts';
import { getStatement, STATEMENT_SELECT, type StatementRecord } from '../../ingest/statements.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope, expireDueUploads, storedId, visibleStatement, visibleStatementsOfUpload, type VisibleStatement } from './shared.ts';

/**
 * The actions on a statement, as `action: { type, statementId }`, or on every statement of an
 * upload whose status allows it, as `action: { type, uploadId }`:
 * - complete: the bytes were PUT; checks the object and queues processing.
 * - reprocess: processes it again (same file, current mapping); rows are replaced atomically.
 * Both take `variables`, the values of the mapping's variable fields, kept with the statement, and
 * `encoding`, the file's text encoding (null: detect it again), kept likewise.
 * - skip / bad: keeps the file but takes its rows out of analytics (`skipped`, `bad`).
 * - delete: soft delete (`deleted`); restore: undo a delete, back to the previous status.
 */
export const uploadActionTypes = ['complete', 'reprocess', 'skip', 'bad', 'delete', 'restore'] as const;

const FROM: Record<(typeof uploadActionTypes)[number], string[]> = {
  complete: ['uploading', 'uploaded'],
  // as mapping.updateById redriveFileIds: a statement being processed is sent back, the run that
  // reads it commits nothing (src/ingest/pipeline.ts) and the next run reads it with the current
  // mapping and variables, after that one, in the statement's own job queue
  reprocess: ['processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'uploaded', 'processing'],
  // likewise a statement being processed is set aside at once: its run commits nothing, and the
  // rows of an earlier version stay out of analytics like any skipped or bad statement's
  skip: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing'],
  bad: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing', 'skipped'],
  // a statement being processed too: the run commits nothing (src/ingest/pipeline.ts), and a
  // restore brings it back queued (it is remembered as uploaded: its run has ended by then)
  delete: ['uploading', 'uploaded', 'processing', 'processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'aborted', 'expired'],
  restore: ['deleted'],
};

/**
 * Whether the statement's status allows the action. `complete` takes a direct upload: one in
 * progress, or completed and not read yet (a second complete checks the object again); a statement
 * the pipeline has read (sent back to `uploaded` by a reprocess or a mapping's release) is no
 * upload any more, and its object is not checked and taken again.
 */
function allows(type: (typeof uploadActionTypes)[number], s: VisibleStatement): boolean {
  if (type === 'complete' && s.wasRead) return false;
  return FROM[type].includes(s.status);
}

export const uploadAction = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Act on a statement or an upload: action { type: complete | reprocess | skip | bad | delete | restore, statementId | uploadId, variables?, encoding? }. complete checks the uploaded object and queues processing; complete and reprocess take variables, the values of the mapping\'s variable fields, and encoding, the file\'s text encoding (null: detect it); on an upload the action applies to each of its files whose status allows it.',
  },
  orgInput({
    action: z
      .strictObject({
        type: z.enum(uploadActionTypes),
        statementId: storedId().optional(),
        uploadId: storedId().optional(),
        variables: variablesSchema.optional(),
        encoding: encodingSchema.nullable().optional(),
      })
      .refine((a) => (a.statementId === undefined) !== (a.uploadId === undefined), { message: 'give statementId or uploadId, not both', path: ['statementId'] })
      .refine((a) => a.variables === undefined || a.type === 'complete' || a.type === 'reprocess', {
        message: 'variables go with complete or reprocess, the actions that read the file',
        path: ['variables'],
      })
      .refine((a) => a.encoding === undefined || a.type === 'complete' || a.type === 'reprocess', {
        message: 'encoding goes with complete or reprocess, the actions that read the file',
        path: ['encoding'],
      }),
  }),
).mutation(async ({ ctx, input }) => {
  const { type, statementId, uploadId, variables } = input.action;
  const encoding = input.action.encoding === undefined || input.action.encoding === null ? input.action.encoding : knownEncoding(input.action.encoding);
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  // an upload past its TTL is expired before anything acts on it: a late complete is refused
  await expireDueUploads(ctx.deps.pool, ctx.org.id, statementId !== undefined ? { statementIds: [statementId] } : { uploadId: uploadId! });
  // restored to uploaded: queued again (the job of its complete or reprocess found it deleted and ended)
  const requeue: string[] = [];
  const acted = await withTransaction(ctx.deps.pool, async (db) => {
    requeue.length = 0;
    let targets: VisibleStatement[];
    if (statementId !== undefined) {
      const s = await visibleStatement(db, caller, statementId, { lock: true });
      if (!allows(type, s)) {
        throw new AppError(
          'STATEMENT_STATE_CONFLICT',
          type === 'complete' && s.wasRead && FROM.complete.includes(s.status)
            ? 'The statement was already read: complete takes an upload in progress (reprocess reads a statement again)'
            : `A statement that is ${s.status} cannot take the action ${type}`,
        );
      }
      targets = [s];
    } else {
      targets = (await visibleStatementsOfUpload(db, caller, uploadId!)).filter((s) => allows(type, s));
      if (targets.length === 0) throw new AppError('STATEMENT_STATE_CONFLICT', `No file of the upload can take the action ${type}`);
    }
    for (const s of targets) {
      // the values of the mapping's variables, for this reading and the ones after it
      if (variables !== undefined) await db.query('UPDATE statements SET variables = $2 WHERE id = $1', [s.id, JSON.stringify(variables)]);
      // and the file's text encoding (null: detected again)
      if (encoding !== undefined) await db.query('UPDATE statements SET encoding = $2 WHERE id = $1', [s.id, encoding]);
      if (type === 'complete') {
        const object = await ctx.deps.store.head(s.objectKey);
        if (!object) throw new AppError('UPLOAD_OBJECT_MISSING', `Nothing was uploaded to the URL of ${s.fileName} yet: PUT the file first`);
        if (object.size === 0) throw new AppError('UPLOAD_EMPTY', `The uploaded file ${s.fileName} is empty`);
        if (s.declaredSize !== null && object.size !== s.declaredSize) {
          throw new AppError('UPLOAD_SIZE_MISMATCH', `The uploaded file ${s.fileName} has ${object.size} bytes; ${s.declaredSize} were announced`);
        }
        // the object as checked: every read of it compares its ETag (bytes PUT again later are not read)
        await db.query(
          `UPDATE statements SET status = 'uploaded', size_bytes = $2, object_etag = $3, upload_expires_at = NULL, updated_at = clock_timestamp() WHERE id = $1`,
          [s.id, object.size, object.etag ?? null],
        );
      } else if (type === 'reprocess') {
        await db.query(`UPDATE statements SET status = 'uploaded', updated_at = clock_timestamp() WHERE id = $1`, [s.id]);
      } else if (type === 'skip' || type === 'bad') {
        await db.query(`UPDATE statements SET status = $2, updated_at = clock_timestamp() WHERE id = $1`, [s.id, type === 'skip' ? 'skipped' : 'bad']);
      } else if (type === 'delete') {
        await db.query(
          `UPDATE statements SET status_before_delete = CASE status WHEN 'processing' THEN 'uploaded' ELSE status END, status = 'deleted',
             deleted_at = clock_timestamp(), updated_at = clock_timestamp() WHERE id = $1`,
          [s.id],
        );
      } else {
        const { rows } = await db.query<{ status: string }>(
          `UPDATE statements SET status = coalesce(status_before_delete, 'uploaded'), status_before_delete = NULL, deleted_at = NULL, updated_at = clock_timestamp()
           WHERE id = $1 RETURNING status`,
          [s.id],
        );
        if (rows[0]?.status === 'uploaded') requeue.push(s.id);
      }
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: `upload.uploadAction.${type}`,
        subjectType: 'file',
        subjectId: s.id,
        subjectLabel: s.fileName,
        changes: { status: { before: s.status, after: type } },
      });
    }
    // skip, bad, delete and restore change which statements analytics reads, and so does a
    // reprocess of a skipped or bad one (its processed version counts again at once, whatever the
    // run ends in): the catalog follows
    const changing = type === 'complete' ? [] : type === 'reprocess' ? targets.filter((s) => s.status === 'skipped' || s.status === 'bad') : targets;
    if (changing.length > 0) await enqueueBlockRefresh(db, ctx.org.id, changing.map((s) => s.rightsholderId), `statement.${type}`);
    return targets.map((s) => s.id);
  });
  // the answer is the statements as the action left them, read before their jobs are queued (a job
  // taken at once would otherwise show them processing, or processed, at random)
  let answer: StatementRecord | { uploadId: string; statementIds: string[]; items: StatementRecord[] };
  if (statementId !== undefined) {
    answer = await getStatement(ctx.deps.pool, ctx.org.id, statementId);
  } else {
    // the upload's files the caller may see, after the action
    const scope = await callerScope(ctx.deps.pool, caller);
    const { rows } = await ctx.deps.pool.query<StatementRecord>(
      `SELECT ${STATEMENT_SELECT} FROM statements s WHERE s.organization_id = $1 AND s.upload_id = $2 AND ($3::uuid[] IS NULL OR s.rightsholder_id = ANY ($3))
       ORDER BY s.created_at, s.id`,
      [ctx.org.id, uploadId, scope],
    );
    answer = { uploadId: uploadId!, statementIds: acted, items: rows };
  }
  if (type === 'complete' || type === 'reprocess') await enqueueStatementIngest(ctx.deps, ctx.org.id, acted, type);
  if (requeue.length > 0) await enqueueStatementIngest(ctx.deps, ctx.org.id, requeue, 'restore');
  return answer;
});
