import { z } from 'zod';
import { diffFields, recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { updateOrganization } from '../../organizations/organizations.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const MAX_MD_FETCH_MULTIPLIER = 100;

export const updateMdFetchSettings = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Set the musical-detail fetch settings: mdFetchMultiplier (1-100) and mdFetchFocus; a field left out keeps its value.',
  },
  orgInput({
    mdFetchMultiplier: z.number().int().min(1).max(MAX_MD_FETCH_MULTIPLIER).optional(),
    mdFetchFocus: z.boolean().optional(),
  }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization: before } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const after = await updateOrganization(db, ctx.org.id, {
      mdFetchMultiplier: input.mdFetchMultiplier,
      mdFetchFocus: input.mdFetchFocus,
    });
    const changes = diffFields(before, after, ['mdFetchMultiplier', 'mdFetchFocus']);
    if (changes) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'organization.updateMdFetchSettings',
        subjectType: 'organization',
        subjectId: ctx.org.id,
        subjectLabel: after.name,
        changes,
      });
    }
    return { mdFetchMultiplier: after.mdFetchMultiplier, mdFetchFocus: after.mdFetchFocus };
  }),
);
