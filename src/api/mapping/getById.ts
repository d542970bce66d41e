import { z } from 'zod';
import { getMapping } from '../../ingest/mappings.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getById = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "One mapping by id (the organization's own or the shared library's); the same as mapping.getMapping with id.",
    deprecated: 'Use mapping.getMapping.',
  },
  orgInput({ id: z.uuid() }),
).query(({ ctx, input }) => getMapping(ctx.deps.pool, ctx.org.id, input.id));
