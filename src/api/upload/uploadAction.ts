import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { enqueueBlockRefresh } from '../../catalog/blocks.ts';
import { enqueueStatementIngest } from '../../ingest/queue.ts';
import { getStatement } from '../../ingest/statements.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { visibleStatement } from './shared.ts';

/**
 * The actions on a statement, as `action: { type, statementId }`:
 * - complete: the bytes were PUT; checks the object and queues processing.
 * - reprocess: processes it again (same file, current mapping); rows are replaced atomically.
 * - skip / bad: keeps the file but takes its rows out of analytics (`skipped`, `bad`).
 * - delete: soft delete (`deleted`); restore: undo a delete, back to the previous status.
 */
export const uploadActionTypes = ['complete', 'reprocess', 'skip', 'bad', 'delete', 'restore'] as const;

const FROM: Record<(typeof uploadActionTypes)[number], string[]> = {
  complete: ['uploading', 'uploaded'],
  reprocess: ['processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'uploaded'],
  skip: ['processed', 'failed', 'needs_mapping', 'uploaded'],
  bad: ['processed', 'failed', 'needs_mapping', 'uploaded', 'skipped'],
  delete: ['uploading', 'uploaded', 'processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'aborted', 'expired'],
  restore: ['deleted'],
};

export const uploadAction = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Act on a statement: action { type: complete | reprocess | skip | bad | delete | restore, statementId }. complete checks the uploaded object and queues processing.',
  },
  orgInput({
    action: z.strictObject({ type: z.enum(uploadActionTypes), statementId: z.uuid() }),
  }),
).mutation(async ({ ctx, input }) => {
  const { type, statementId } = input.action;
  const caller = { organizationId: ctx.org.id, userId: ctx.principal.userId };
  let enqueue = false;
  await withTransaction(ctx.deps.pool, async (db) => {
    const s = await visibleStatement(db, caller, statementId, { lock: true });
    if (!FROM[type].includes(s.status)) {
      throw new AppError('STATEMENT_STATE_CONFLICT', `A statement that is ${s.status} cannot take the action ${type}`);
    }
    if (type === 'complete') {
      const object = await ctx.deps.store.head(s.objectKey);
      if (!object) throw new AppError('UPLOAD_OBJECT_MISSING', 'Nothing was uploaded to the URL yet: PUT the file first');
      if (object.size === 0) throw new AppError('UPLOAD_EMPTY', 'The uploaded file is empty');
      if (s.declaredSize !== null && object.size !== s.declaredSize) {
        throw new AppError('UPLOAD_SIZE_MISMATCH', `The uploaded file has ${object.size} bytes; ${s.declaredSize} were announced`);
      }
      await db.query(`UPDATE statements SET status = 'uploaded', size_bytes = $2, upload_expires_at = NULL, updated_at = clock_timestamp() WHERE id = $1`, [
        statementId,
        object.size,
      ]);
      enqueue = true;
    } else if (type === 'reprocess') {
      await db.query(`UPDATE statements SET status = 'uploaded', updated_at = clock_timestamp() WHERE id = $1`, [statementId]);
      enqueue = true;
    } else if (type === 'skip' || type === 'bad') {
      await db.query(`UPDATE statements SET status = $2, updated_at = clock_timestamp() WHERE id = $1`, [statementId, type === 'skip' ? 'skipped' : 'bad']);
    } else if (type === 'delete') {
      await db.query(
        `UPDATE statements SET status_before_delete = status, status = 'deleted', deleted_at = clock_timestamp(), updated_at = clock_timestamp() WHERE id = $1`,
        [statementId],
      );
    } else {
      await db.query(
        `UPDATE statements SET status = coalesce(status_before_delete, 'uploaded'), status_before_delete = NULL, deleted_at = NULL, updated_at = clock_timestamp() WHERE id = $1`,
        [statementId],
      );
    }
    // skip, bad, delete and restore change which statements are processed: the catalog follows
    if (type !== 'complete' && type !== 'reprocess') await enqueueBlockRefresh(db, ctx.org.id, [s.rightsholderId], `statement.${type}`);
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: `upload.uploadAction.${type}`,
      subjectType: 'file',
      subjectId: statementId,
      subjectLabel: s.fileName,
      changes: { status: { before: s.status, after: type } },
    });
  });
  if (enqueue) await enqueueStatementIngest(ctx.deps, ctx.org.id, [statementId], type);
  return getStatement(ctx.deps.pool, ctx.org.id, statementId);
});
