import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { listMdPriorities, replaceMdPriorities } from '../../organizations/mdPriorities.ts';
import { lockOrganization } from '../../organizations/organizations.ts';
import { assertRightsholdersExist } from '../../organizations/rightsholderRefs.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';

export const MAX_MD_PRIORITIES = 10_000;

export const setRightsholderMdPriorities = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary: 'Replace the whole musical-detail fetch priority ordering with the given rightsholder ids (first = fetched first).',
  },
  orgInput({
    rightsholderIds: list(z.uuid(), MAX_MD_PRIORITIES)
      .default([])
      .refine((ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length, 'must not repeat an id'),
  }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const organization = await lockOrganization(db, ctx.org.id);
    await assertRightsholdersExist(db, ctx.org.id, input.rightsholderIds, { live: true });
    const before = await listMdPriorities(db, ctx.org.id);
    await replaceMdPriorities(db, ctx.org.id, input.rightsholderIds);
    const after = await listMdPriorities(db, ctx.org.id);
    const ids = (rows: typeof after) => rows.map((r) => r.rightsholderId);
    if (JSON.stringify(ids(before)) !== JSON.stringify(ids(after))) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'organization.setRightsholderMdPriorities',
        subjectType: 'organization',
        subjectId: ctx.org.id,
        subjectLabel: organization.name,
        changes: { rightsholderMdPriorities: { before: ids(before), after: ids(after) } },
        rightsholderIds: [...ids(before), ...ids(after)],
      });
    }
    return after;
  }),
);
