import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { updateDistributor } from '../../ingest/distributors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { distributorName } from './inputs.ts';

export const updateById = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Rename one of the organization's distributors (library distributors are read-only); the name stays unique in the organization.",
  },
  orgInput({ id: z.uuid(), name: distributorName.optional() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    updateDistributor(db, ctx.principal, ctx.org.id, input.id, { name: input.name }),
  ),
);
