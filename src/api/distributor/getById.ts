import { z } from 'zod';
import { getDistributor } from '../../ingest/distributors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getById = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "One distributor (the organization's own or the shared library's) with the mappings of it the organization sees.",
  },
  orgInput({ id: z.uuid() }),
).query(({ ctx, input }) => getDistributor(ctx.deps.pool, ctx.org.id, input.id));
