import { visibleExport, exportView } from '../../exports/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { exportIdField } from './fields.ts';

export const status = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "One export: status (queued, running, completed, failed, expired), progress { done, total } in rows, rowCount, fileCount, totalBytes, expiresAt (when a completed export's files are deleted), and errorCode and reason when it failed. Exports naming a rightsholder outside the caller's data access are NOT_FOUND.",
  },
  orgInput({ exportId: exportIdField }),
).query(async ({ ctx, input }) =>
  exportView(
    await visibleExport(ctx.deps.pool, ctx.org.id, ctx.org.rightsholderScope, input.exportId),
  ),
);
