import { z } from 'zod';
import { getRightsholder } from '../../rightsholders/store.ts';
import { rightsholderAccess } from '../../rightsholders/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getById = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary: 'One rightsholder by id, soft-deleted ones included (isDeleted tells).',
  },
  orgInput({ id: z.uuid() }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  return getRightsholder(db, rightsholderAccess(ctx.org, ctx.principal.userId), input.id);
});
