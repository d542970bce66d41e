import { z } from 'zod';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from '../upload/shared.ts';
import { filesOfUpload } from './shared.ts';

export const getFilesDeleteInfo = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "What file.deleteFilesByIds would remove: the files, their rows and totals, their stored objects, flags, the rightsholders and periods affected, the catalog blocks built from them (refreshed after the delete) and those rightsholders' catalogs.",
  },
  orgInput({ fileIds: z.array(storedId()).min(1).max(1000), uploadId: storedId() }),
).query(async ({ ctx, input }) => {
  const files = await filesOfUpload(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId }, input.uploadId, input.fileIds);
  const ids = files.map((f) => f.id);
  const { rows } = await ctx.deps.pool.query<{ flags: number; periods: unknown }>(
    `SELECT (SELECT count(*) FROM statement_flags WHERE statement_id = ANY ($1))::int AS flags,
       coalesce((SELECT json_agg(DISTINCT jsonb_build_object('rightsholderId', rightsholder_id, 'stmtYear', stmt_year, 'stmtPeriod', stmt_period, 'stmtCadence', stmt_cadence))
         FROM statements WHERE id = ANY ($1) AND stmt_year IS NOT NULL), '[]') AS periods`,
    [ids],
  );
  // the catalog blocks built from these files: each is refreshed after the delete, and its
  // rightsholder's catalog (musical details and products) derived again without their rows
  const blocks = await ctx.deps.pool.query<{
    id: string;
    rightsholderId: string;
    rightsholderName: string;
    state: string;
    statements: number;
    statementsRemoved: number;
    musicalDetails: number;
    tracks: number;
    albums: number;
  }>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName", b.state,
       (SELECT count(*) FROM jsonb_object_keys(b.source_versions))::int AS statements,
       (SELECT count(*) FROM jsonb_object_keys(b.source_versions) k WHERE k = ANY ($2::text[]))::int AS "statementsRemoved",
       (SELECT count(*) FROM musical_details d WHERE d.block_id = b.id)::int AS "musicalDetails",
       (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'track')::int AS tracks,
       (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'album')::int AS albums
     FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.organization_id = $1 AND b.rightsholder_id = ANY ($3::uuid[]) AND b.source_versions ?| $2::text[]
     ORDER BY r.name, b.id`,
    [ctx.org.id, ids, [...new Set(files.map((f) => f.rightsholderId))]],
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
    blocks: blocks.rows.map(({ tracks: _t, albums: _a, rightsholderName: _n, ...b }) => ({ ...b, refreshAfterDelete: true })),
    catalogs: blocks.rows.map((b) => ({
      rightsholderId: b.rightsholderId,
      rightsholderName: b.rightsholderName,
      blockId: b.id,
      musicalDetails: b.musicalDetails,
      products: { tracks: b.tracks, albums: b.albums },
    })),
  };
});
