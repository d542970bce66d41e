import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { AppError } from '../../errors.ts';
import { rightsholdersKept } from '../../exports/expire.ts';
import { effectiveStatus, exportFile, visibleExport } from '../../exports/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { exportIdField } from './fields.ts';

const DOWNLOAD_TTL_SECONDS = 10 * 60;

export const downloadFile = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "A short-lived presigned GET URL (10 minutes, or until the export's expiresAt if sooner) for one file of a completed export, downloading as an attachment under its file name. An expired export answers EXPORT_EXPIRED.",
  },
  orgInput({
    exportId: exportIdField,
    fileId: z.uuid().describe('the file id, from export.listFiles'),
  }),
).mutation(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const e = await visibleExport(db, ctx.org.id, ctx.org.rightsholderScope, input.exportId);
  const now = Date.now();
  const status = effectiveStatus(e, now);
  // a rightsholder it names was deleted since: its data is not handed out (the files are deleted)
  if ((status === 'expired' || status === 'completed') && !(await rightsholdersKept(db, e.id))) {
    throw new AppError(
      'EXPORT_EXPIRED',
      'The export expired: a rightsholder it names was deleted, and its files with it',
    );
  }
  if (status === 'expired') {
    throw new AppError(
      'EXPORT_EXPIRED',
      `The export expired at ${e.expires_at!.toISOString()}: its files were deleted after the retention period; trigger it again`,
    );
  }
  if (status !== 'completed')
    throw new AppError(
      'EXPORT_FILE_NOT_FOUND',
      `The export is ${status}; its files exist once it is completed`,
    );
  const file = await exportFile(db, e.id, input.fileId);
  // a link never outlives the files
  const ttl = e.expires_at
    ? Math.max(1, Math.min(DOWNLOAD_TTL_SECONDS, Math.floor((e.expires_at.getTime() - now) / 1000)))
    : DOWNLOAD_TTL_SECONDS;
  const url = await ctx.deps.store.presignGet(file.object_key, file.file_name, ttl);
  await recordActivity(db, ctx.principal, {
    organizationId: ctx.org.id,
    action: 'export.downloadFile',
    subjectType: 'export',
    subjectId: e.id,
    subjectLabel: file.file_name,
  });
  return { url, fileName: file.file_name, expiresAt: new Date(now + ttl * 1000).toISOString() };
});
