import { z } from 'zod';
import { PATTERN_RE, updateApiKey } from '../../auth/apiKeys.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, name, orgInput } from '../../trpc/schemas.ts';
import { manageableApiKey } from './access.ts';

export const update = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary: 'Rotate an API key (a new secret, returned once; the old one stops working at once) and/or rename it or change its procedure patterns.',
  },
  orgInput({
    id: z.uuid(),
    rotate: z.boolean().default(true),
    name: name(100).optional(),
    patterns: list(z.string().regex(PATTERN_RE, 'must be *, a procedure name or a namespace pattern like rightsholder.*'), 200)
      .min(1)
      .optional(),
  }),
).mutation(async ({ ctx, input }) => {
  await manageableApiKey(ctx.deps.pool, ctx.principal, ctx.org, input.id, { rotate: input.rotate });
  const { key, record } = await updateApiKey(ctx.deps.pool, input.id, {
    name: input.name,
    patterns: input.patterns,
    rotate: input.rotate,
  });
  return { ...record, key };
});
