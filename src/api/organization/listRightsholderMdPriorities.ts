import { listMdPriorities } from '../../organizations/mdPriorities.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput, text } from '../../trpc/schemas.ts';

export const listRightsholderMdPriorities = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "The ordered rightsholders for musical-detail fetch priority (position 1 first); search filters by name; a restricted admin sees only their data-access role's rightsholders, at their real positions.",
  },
  orgInput({ search: text(200).optional() }),
).query(async ({ ctx, input }) =>
  listMdPriorities(ctx.deps.pool, ctx.org.id, input.search, ctx.org.rightsholderScope),
);
