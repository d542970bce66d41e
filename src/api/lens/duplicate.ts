import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { duplicate as duplicateLens } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensFields } from './fields.ts';
import { lensViewer } from './viewer.ts';

export const duplicate = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Copy a visible lens into a new one owned by the caller; name defaults to "<name> (copy)", scope to the original\'s.',
  },
  orgInput({ id: z.uuid(), name: lensFields.name.optional(), scope: lensFields.scope.optional() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    duplicateLens(db, ctx.principal, lensViewer(ctx), input.id, {
      name: input.name,
      scope: input.scope,
    }),
  ),
);
