import { z } from 'zod';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { filesOfUpload } from './shared.ts';

export const getFilesDeleteInfo = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary: 'What file.deleteFilesByIds would remove: the files, their rows and totals, their stored objects, flags, and the rightsholders and periods affected.',
  },
  orgInput({ fileIds: z.array(z.uuid()).min(1).max(1000), uploadId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const files = await filesOfUpload(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId }, input.uploadId, input.fileIds);
  const ids = files.map((f) => f.id);
  const { rows } = await ctx.deps.pool.query<{ flags: number; periods: unknown }>(
    `SELECT (SELECT count(*) FROM statement_flags WHERE statement_id = ANY ($1))::int AS flags,
       coalesce((SELECT json_agg(DISTINCT jsonb_build_object('rightsholderId', rightsholder_id, 'stmtYear', stmt_year, 'stmtPeriod', stmt_period, 'stmtCadence', stmt_cadence))
         FROM statements WHERE id = ANY ($1) AND stmt_year IS NOT NULL), '[]') AS periods`,
    [ids],
  );
  return {
    files: files.map(({ objectKeys, ...f }) => ({ ...f, objects: objectKeys.length })),
    totals: {
      files: files.length,
      rows: files.reduce((n, f) => n + (f.keptRows ?? 0), 0),
      objects: files.reduce((n, f) => n + f.objectKeys.length, 0),
      flags: rows[0]!.flags,
    },
    rightsholderIds: [...new Set(files.map((f) => f.rightsholderId))],
    periods: rows[0]!.periods,
    // blocks and catalogs arrive with the catalog; none are derived from statements yet
    blocks: [],
  };
});
