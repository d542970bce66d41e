import { z } from 'zod';
import { getMapping, redrivePreview as preview } from '../../ingest/mappings.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const redrivePreview = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "What a redrive with the mapping's current revision would change: the organization's statements with its header hash that wait in needs_mapping or were processed with an older revision or another mapping, each with the fields that differ.",
  },
  orgInput({ mappingId: z.uuid() }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const mapping = await getMapping(db, ctx.org.id, input.mappingId);
  return preview(db, ctx.org.id, mapping, ctx.org.rightsholderScope);
});
