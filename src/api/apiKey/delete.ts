import { z } from 'zod';
import { deleteApiKey } from '../../auth/apiKeys.ts';
import { withTransaction } from '../../db/pool.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { manageableApiKey, recordKeyChange } from './access.ts';

export const deleteKey = orgProcedure(
  { minRole: 'admin', scope: '', summary: 'Delete an API key; it stops working at once.' },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    // the caller's role as it is once the organization is locked (a demotion may have committed meanwhile)
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const key = await manageableApiKey(db, ctx.principal, access, input.id, { rotate: false });
    await deleteApiKey(db, key.id);
    await recordKeyChange(db, ctx.principal, ctx.org, 'apiKey.delete', key, null);
    // the id as stored (lower case), whatever case it was sent in
    return { id: key.id, deleted: true };
  }),
);
