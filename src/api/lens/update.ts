import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { update as updateLens } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensFields, optionalPayload } from './fields.ts';
import { lensViewer } from './viewer.ts';

export const update = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Change a lens: omitted fields stay, null clears description or viewName; only the owner may make a lens personal.',
  },
  orgInput({
    id: z.uuid(),
    name: lensFields.name.optional(),
    description: lensFields.description,
    scope: lensFields.scope.optional(),
    tags: lensFields.tags.optional(),
    payload: optionalPayload,
    viewName: lensFields.viewName,
  }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    updateLens(db, ctx.principal, lensViewer(ctx), input.id, {
      name: input.name,
      description: input.description,
      scope: input.scope,
      tags: input.tags,
      payload: input.payload,
      viewName: input.viewName,
    }),
  ),
);
