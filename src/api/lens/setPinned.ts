import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { setPinned as pin } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensViewer } from './viewer.ts';

export const setPinned = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      "Pin or unpin a lens for the caller; pins are per member (the lens's pinned field is the caller's).",
  },
  orgInput({ id: z.uuid(), pinned: z.boolean() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    pin(db, ctx.principal, lensViewer(ctx), input.id, input.pinned),
  ),
);
