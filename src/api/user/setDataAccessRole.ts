import { z } from 'zod';
import { diffFields, recordActivity } from '../../activity/record.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import {
  assertMayManage,
  assertOwnerRemains,
  getMember,
  lockAsCaller,
} from '../../organizations/members.ts';
import {
  getDataAccessRole,
  setDataAccessRole as store,
  type DataAccessRole,
} from '../../organizations/preferences.ts';
import { assertRightsholdersExist } from '../../organizations/rightsholderRefs.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';

export const MAX_RESTRICTED_RIGHTSHOLDERS = 10_000;

/** 'all' (or { mode: 'all' }): every rightsholder; { mode: 'restricted', rightsholderIds }: only those. */
const dataAccessRole = z.union([
  z.literal('all').transform((): DataAccessRole => ({ mode: 'all' })),
  z.object({ mode: z.literal('all') }).strict(),
  z
    .object({
      mode: z.literal('restricted'),
      rightsholderIds: list(z.uuid(), MAX_RESTRICTED_RIGHTSHOLDERS).transform((ids) => [
        ...new Set(ids.map((id) => id.toLowerCase())),
      ]),
    })
    .strict(),
]);

export const setDataAccessRole = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      "Set which rightsholders a member sees: 'all', { mode: 'all' } or { mode: 'restricted', rightsholderIds }.",
  },
  orgInput({ userId: z.uuid(), role: dataAccessRole }),
).mutation(async ({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const member = await getMember(db, ctx.org.id, input.userId);
    assertMayManage(access, member);
    const role: DataAccessRole = input.role;
    if (role.mode === 'restricted')
      await assertRightsholdersExist(db, ctx.org.id, role.rightsholderIds, { live: false });
    // nobody grants more than they see: a restricted caller (an admin an owner restricted) grants
    // neither 'all' nor a rightsholder outside their own set, to themselves or anyone else
    const own = access.rightsholderScope;
    if (own !== null) {
      if (role.mode === 'all')
        throw new AppError(
          'ROLE_NOT_GRANTABLE',
          "Your own data-access role is restricted: you cannot grant 'all'",
        );
      const outside = role.rightsholderIds.filter((id) => !own.includes(id));
      if (outside.length > 0) {
        throw new AppError(
          'RIGHTSHOLDER_NOT_FOUND',
          `No rightsholder of the organization has the id ${outside.slice(0, 10).join(', ')}`,
          {
            details: { rightsholderIds: outside.slice(0, 100) },
          },
        );
      }
    }
    // the last unrestricted owner stays so: once every owner is restricted nobody grants 'all' again
    await assertOwnerRemains(db, ctx.org.id, member, {
      role: member.role,
      status: member.status,
      restricted: role.mode === 'restricted',
    });
    const before = { dataAccessRole: await getDataAccessRole(db, ctx.org.id, member.userId) };
    await store(db, ctx.org.id, member.userId, role);
    const after = { dataAccessRole: await getDataAccessRole(db, ctx.org.id, member.userId) };
    const changes = diffFields(before, after, ['dataAccessRole']);
    if (changes) {
      await recordActivity(db, ctx.principal, {
        organizationId: ctx.org.id,
        action: 'user.setDataAccessRole',
        subjectType: 'user',
        subjectId: member.userId,
        subjectLabel: member.email,
        changes,
        // the rightsholders it names, before and after
        rightsholderIds: [before, after].flatMap(({ dataAccessRole: r }) =>
          r.mode === 'restricted' ? r.rightsholderIds : [],
        ),
      });
    }
    return { userId: member.userId, dataAccessRole: after.dataAccessRole };
  }),
);
