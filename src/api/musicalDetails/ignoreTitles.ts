import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { ignoreTitles as ignore } from '../../catalog/overrides.ts';
import { plainText } from '../../activity/inputs.ts';
import { afterCorrection } from '../../catalog/followUps.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const ignoreTitles = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Exclude titles from enrichment, organization-wide and for the future: matched after normalization (case, diacritics, punctuation); matching musical details become ignored and, unless resolved, skipped. Answers { titles: [{ title, normalizedTitle, created }], musicalDetails }.',
  },
  orgInput({ titles: z.array(plainText(500).trim().min(1)).min(1).max(1_000) }),
).mutation(async ({ ctx, input }) => {
  // the titles apply to every rightsholder's details, present and future: not for a member who sees only some
  if (ctx.org.rightsholderScope !== null)
    throw new AppError(
      'DATA_ACCESS_RESTRICTED',
      'Ignoring titles applies to the whole organization; your data access is restricted to some rightsholders',
    );
  const { blockIds, ...result } = await withTransaction(ctx.deps.pool, (db) =>
    ignore(db, ctx.principal, callerOf(ctx.org), input.titles),
  );
  await afterCorrection(ctx.deps, blockIds);
  return result;
});
