import { z } from 'zod';
import { deleteApiKey } from '../../auth/apiKeys.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { manageableApiKey } from './access.ts';

export const deleteKey = orgProcedure(
  { minRole: 'admin', scope: '', summary: 'Delete an API key; it stops working at once.' },
  orgInput({ id: z.uuid() }),
).mutation(async ({ ctx, input }) => {
  await manageableApiKey(ctx.deps.pool, ctx.principal, ctx.org, input.id, { rotate: false });
  await deleteApiKey(ctx.deps.pool, input.id);
  return { id: input.id, deleted: true };
});
