import { z } from 'zod';
import { recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import {
  listMdPriorities,
  mergeMdPriorities,
  replaceMdPriorities,
  storedMdPriorityIds,
} from '../../organizations/mdPriorities.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { assertRightsholdersExist } from '../../organizations/rightsholderRefs.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';

export const MAX_MD_PRIORITIES = 10_000;

export const setRightsholderMdPriorities = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Replace the whole musical-detail fetch priority ordering with the given rightsholder ids (first = fetched first).',
  },
  orgInput({
    rightsholderIds: list(z.uuid(), MAX_MD_PRIORITIES)
      .default([])
      .refine(
        (ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length,
        'must not repeat an id',
      ),
  }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { organization, access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    await assertRightsholdersExist(db, ctx.org.id, input.rightsholderIds, { live: true });
    const scope = access.rightsholderScope;
    const before = await listMdPriorities(db, ctx.org.id);
    let ordering = input.rightsholderIds.map((id) => id.toLowerCase());
    if (scope !== null) {
      // a restricted admin orders the rightsholders they see; the others are none of their business
      // (an id outside their set is as unknown as another organization's) and keep their places
      const outside = ordering.filter((id) => !scope.includes(id));
      if (outside.length > 0) {
        throw new AppError(
          'RIGHTSHOLDER_NOT_FOUND',
          `No rightsholder of the organization has the id ${outside.slice(0, 10).join(', ')}`,
          {
            details: { rightsholderIds: outside.slice(0, 100) },
          },
        );
      }
      // over the stored ordering: a soft-deleted rightsholder outside their set keeps its place too
      // (restored, it is where it was)
      ordering = mergeMdPriorities(await storedMdPriorityIds(db, ctx.org.id), ordering, scope);
    }
    await replaceMdPriorities(db, ctx.org.id, ordering);
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
    return scope === null ? after : listMdPriorities(db, ctx.org.id, undefined, scope);
  }),
);
