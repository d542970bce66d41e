import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { AppError } from '../../errors.ts';
import { exportFile, visibleExport } from '../../exports/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope, exportIdField } from './shared.ts';

const DOWNLOAD_TTL_SECONDS = 10 * 60;

export const downloadFile = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary: 'A short-lived (10 minutes) presigned GET URL for one file of a completed export, downloading as an attachment under its file name.',
  },
  orgInput({ exportId: exportIdField, fileId: z.uuid().describe('the file id, from export.listFiles') }),
).mutation(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const e = await visibleExport(db, ctx.org.id, await callerScope(db, ctx), input.exportId);
  if (e.status !== 'completed') throw new AppError('EXPORT_FILE_NOT_FOUND', `The export is ${e.status}; its files exist once it is completed`);
  const file = await exportFile(db, e.id, input.fileId);
  const url = await ctx.deps.store.presignGet(file.object_key, file.file_name, DOWNLOAD_TTL_SECONDS);
  await recordActivity(db, ctx.principal, {
    organizationId: ctx.org.id,
    action: 'export.downloadFile',
    subjectType: 'export',
    subjectId: e.id,
    subjectLabel: file.file_name,
  });
  return { url, fileName: file.file_name, expiresAt: new Date(Date.now() + DOWNLOAD_TTL_SECONDS * 1000).toISOString() };
});
