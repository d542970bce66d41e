import { withTransaction } from '../../db/pool.ts';
import { create as createLens } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensFields, requiredPayload } from './fields.ts';
import { lensViewer } from './viewer.ts';

export const create = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Save an analytics lens; scope personal keeps it to the caller, organization (the default) shares it with every member.',
  },
  orgInput({
    name: lensFields.name,
    description: lensFields.description,
    scope: lensFields.scope.default('organization'),
    tags: lensFields.tags.default([]),
    kind: lensFields.kind,
    viewName: lensFields.viewName,
    payload: requiredPayload,
  }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    createLens(db, ctx.principal, lensViewer(ctx), {
      name: input.name,
      description: input.description ?? null,
      scope: input.scope,
      tags: input.tags,
      kind: input.kind,
      viewName: input.viewName ?? null,
      payload: input.payload,
    }),
  ),
);
