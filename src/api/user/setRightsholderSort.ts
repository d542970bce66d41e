import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import {
  getRightsholderSort,
  RIGHTSHOLDER_SORTS,
  setRightsholderSort as store,
} from '../../organizations/preferences.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const setRightsholderSort = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary: "Set the caller's rightsholder ordering in the organization (the home page's list).",
  },
  orgInput({ sort: z.enum(RIGHTSHOLDER_SORTS) }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const before = await getRightsholderSort(db, ctx.org.id, ctx.principal.userId);
    await store(db, ctx.org.id, ctx.principal.userId, input.sort);
    if (before !== input.sort) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'user.setRightsholderSort',
        subjectType: 'user',
        subjectId: ctx.principal.userId,
        subjectLabel: ctx.principal.email,
        changes: { rightsholderSort: { before, after: input.sort } },
      });
    }
    return { rightsholderSort: input.sort };
  }),
);
