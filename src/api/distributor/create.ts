import { withTransaction } from '../../db/pool.ts';
import { createDistributor } from '../../ingest/distributors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { distributorName } from './inputs.ts';

export const create = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Create a distributor (a statement format owner) of the organization; its name is unique in the organization, ignoring case and surrounding space.',
  },
  orgInput({ name: distributorName }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    createDistributor(db, ctx.principal, ctx.org.id, input.name),
  ),
);
