import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { deleteMapping } from '../../ingest/mappings.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const deleteById = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      "Delete one of the organization's own mappings with its revisions (library mappings are read-only); statements processed with it keep their rows, and statements with its headers fall back to the library's mapping.",
  },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) => deleteMapping(db, ctx.principal, ctx.org.id, input.id)),
);
