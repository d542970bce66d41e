import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { deleteObjects } from '../../storage/objectStore.ts';
import { enqueueBlockRefreshForStatements } from '../../catalog/blocks.ts';
import {
  deleteStatementRows,
  deleteUploadIfEmpty,
  filesOfUpload,
  lockUpload,
} from '../../ingest/fileStore.ts';
import { storedId } from '../upload/inputs.ts';

export const deleteFilesByIds = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Delete files of an upload for good: their statements, rows, flags and every stored object (all variants). See file.getFilesDeleteInfo first.',
  },
  orgInput({ fileIds: z.array(storedId()).min(1).max(1000), uploadId: storedId() }),
).mutation(async ({ ctx, input }) => {
  const files = await withTransaction(ctx.deps.pool, async (db) => {
    // the upload first, as upload.uploadFile locks it to add a file: a file added meanwhile is either
    // in before this delete looks (and keeps the upload), or finds the upload gone (UPLOAD_NOT_FOUND);
    // without it the upload went as empty while a file was being added, and that file with it
    await lockUpload(db, ctx.org.id, input.uploadId);
    const files = await filesOfUpload(db, ctx.org, input.uploadId, input.fileIds, true);
    const ids = files.map((f) => f.id);
    await enqueueBlockRefreshForStatements(db, ctx.org.id, ids, 'file.deleteFilesByIds');
    await deleteStatementRows(db, ids);
    // an upload left without files goes too
    await deleteUploadIfEmpty(db, input.uploadId);
    for (const f of files) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'file.deleteFilesByIds',
        subjectType: 'file',
        subjectId: f.id,
        subjectLabel: f.fileName,
        changes: { status: { before: f.status, after: 'removed' } },
        rightsholderIds: [f.rightsholderId],
      });
    }
    return files;
  });
  // the rows are gone with the commit; the objects follow (a failure is logged and counted)
  const failed = await deleteObjects(
    ctx.deps.store,
    files.flatMap((f) => f.objectKeys),
    ctx.deps.log,
  );
  return {
    deleted: files.map((f) => f.id),
    objectsRemoved: files.reduce((n, f) => n + f.objectKeys.length, 0) - failed.length,
    objectsFailed: failed.length,
  };
});
