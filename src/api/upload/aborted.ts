import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { getStatement } from '../../ingest/statements.ts';
import {
  abortUpload,
  expireDueUploads,
  moved,
  transitionAllows,
} from '../../ingest/statementStatus.ts';
import { visibleStatement } from '../../ingest/uploadStore.ts';
import { deleteObjects } from '../../storage/objectStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const aborted = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Say that a direct upload was abandoned: the statement (uploading, or uploaded and not yet read) becomes aborted and its object is removed. A statement already read or processed is deleted with uploadAction delete instead.',
  },
  orgInput({ statementId: z.uuid(), reason: z.string().max(1000).optional() }),
).mutation(async ({ ctx, input }) => {
  await expireDueUploads(ctx.deps.pool, {
    organizationId: ctx.org.id,
    statementIds: [input.statementId],
  });
  const key = await withTransaction(ctx.deps.pool, async (db) => {
    const s = await visibleStatement(db, ctx.org, input.statementId, { lock: true });
    if (!transitionAllows('abortUpload', s.status)) {
      throw new AppError(
        'STATEMENT_STATE_CONFLICT',
        `A statement that is ${s.status} cannot be aborted`,
      );
    }
    // only a direct upload the pipeline has not read yet: an uploaded statement that was read before
    // (sent back by a reprocess or a mapping's release, or after a failure) has its file, and maybe rows in analytics,
    // which an abort would take from under it
    if (s.wasRead) {
      throw new AppError(
        'STATEMENT_STATE_CONFLICT',
        'The statement was already read (it is queued to be processed again): it cannot be aborted; delete it with uploadAction delete',
      );
    }
    moved(
      await abortUpload(
        db,
        input.statementId,
        input.reason ?? 'The upload was aborted by the client.',
      ),
      `A statement that is ${s.status} cannot be aborted`,
    );
    await recordActivity(db, ctx.principal, {
      organizationId: ctx.org.id,
      action: 'upload.aborted',
      subjectType: 'file',
      subjectId: input.statementId,
      subjectLabel: s.fileName,
      changes: { status: { before: s.status, after: 'aborted' } },
    });
    return s.objectKey;
  });
  await deleteObjects(ctx.deps.store, [key], ctx.deps.log);
  return getStatement(ctx.deps.pool, ctx.org.id, input.statementId);
});
