import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { visibleDetails } from '../../catalog/musicalDetailStore.ts';
import { overrideValuesShape, updateResults as update } from '../../catalog/overrides.ts';
import { afterCorrection } from '../../catalog/followUps.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

const { title, artist, releaseDate, ...optional } = overrideValuesShape;

export const updateResults = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Correct the results of musical details (resultIds are musical detail ids): an override with who and when, laid over the fetched values and kept through re-fetching, re-clustering and reprocessing. An empty string clears a field. Answers the musical details with their effective values.',
  },
  orgInput({
    resultIds: z.array(z.uuid()).min(1).max(1_000),
    overrideValues: z.strictObject({
      title,
      artist,
      releaseDate,
      imageUrl: optional.imageUrl.optional(),
      genres: optional.genres.optional(),
      albums: optional.albums.optional(),
      songWriters: optional.songWriters.optional(),
      fetchedComposers: optional.fetchedComposers.optional(),
    }),
  }),
).mutation(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const ids = await withTransaction(ctx.deps.pool, (db) =>
    update(db, ctx.principal, caller, input.resultIds, input.overrideValues),
  );
  const records = await visibleDetails(ctx.deps.pool, caller, ids);
  await afterCorrection(ctx.deps, [...new Set(records.map((r) => r.blockId))]);
  return { data: records };
});
