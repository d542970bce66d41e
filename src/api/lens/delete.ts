import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { remove } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensViewer } from './viewer.ts';

export const deleteLens = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      "Delete a lens (a personal one only by its owner), with every member's pin and opens of it.",
  },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) => remove(db, ctx.principal, lensViewer(ctx), input.id)),
);
