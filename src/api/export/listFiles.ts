import { effectiveStatus, exportFiles, fileView, visibleExport } from '../../exports/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { exportIdField } from './fields.ts';

export const listFiles = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'The output files (parts) of an export, in order, each with its id, part number, fileName, contentType, rowCount, sizeBytes and sha256. Empty until the export is completed; a failed or expired export has none.',
  },
  orgInput({ exportId: exportIdField }),
).query(async ({ ctx, input }) => {
  const e = await visibleExport(
    ctx.deps.pool,
    ctx.org.id,
    ctx.org.rightsholderScope,
    input.exportId,
  );
  const status = effectiveStatus(e);
  const files = status === 'completed' ? await exportFiles(ctx.deps.pool, e.id) : [];
  return { exportId: e.id, status, files: files.map(fileView) };
});
