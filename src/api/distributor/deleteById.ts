import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { deleteDistributor } from '../../ingest/distributors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const deleteById = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      "Delete one of the organization's distributors; refused (DISTRIBUTOR_IN_USE) while any of its mappings or statements still name it, and for library distributors.",
  },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    deleteDistributor(db, ctx.principal, ctx.org.id, input.id),
  ),
);
