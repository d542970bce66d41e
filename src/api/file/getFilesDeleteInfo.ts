import { z } from 'zod';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { blocksBuiltFrom, filesOfUpload, flagsAndPeriodsOf } from '../../ingest/fileStore.ts';
import { storedId } from '../upload/inputs.ts';

export const getFilesDeleteInfo = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "What file.deleteFilesByIds would remove: the files, their rows and totals, their stored objects, flags, the rightsholders and periods affected, the catalog blocks built from them (refreshed after the delete) and those rightsholders' catalogs.",
  },
  orgInput({ fileIds: z.array(storedId()).min(1).max(1000), uploadId: storedId() }),
).query(async ({ ctx, input }) => {
  const files = await filesOfUpload(ctx.deps.pool, ctx.org, input.uploadId, input.fileIds);
  const ids = files.map((f) => f.id);
  const { flags, periods } = await flagsAndPeriodsOf(ctx.deps.pool, ids);
  // the catalog blocks built from these files: each is refreshed after the delete, and its
  // rightsholder's catalog (musical details and products) derived again without their rows
  const blocks = await blocksBuiltFrom(ctx.deps.pool, ctx.org.id, ids, [
    ...new Set(files.map((f) => f.rightsholderId)),
  ]);
  return {
    files: files.map(({ objectKeys, ...f }) => ({ ...f, objects: objectKeys.length })),
    totals: {
      files: files.length,
      rows: files.reduce((n, f) => n + (f.keptRows ?? 0), 0),
      objects: files.reduce((n, f) => n + f.objectKeys.length, 0),
      flags,
    },
    rightsholderIds: [...new Set(files.map((f) => f.rightsholderId))],
    periods,
    blocks: blocks.map(({ tracks: _t, albums: _a, rightsholderName: _n, ...b }) => ({
      ...b,
      refreshAfterDelete: true,
    })),
    catalogs: blocks.map((b) => ({
      rightsholderId: b.rightsholderId,
      rightsholderName: b.rightsholderName,
      blockId: b.id,
      musicalDetails: b.musicalDetails,
      products: { tracks: b.tracks, albums: b.albums },
    })),
  };
});
