import { z } from 'zod';
import { PATTERN_RE, patternsWithin, updateApiKey } from '../../auth/apiKeys.ts';
import { withTransaction } from '../../db/pool.ts';
import { lockAsCaller } from '../../organizations/members.ts';
import { AppError } from '../../errors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, name, orgInput } from '../../trpc/schemas.ts';
import { manageableApiKey, recordKeyChange } from './access.ts';

export const update = orgProcedure(
  {
    minRole: 'admin',
    scope: '',
    summary:
      'Rotate an API key (a new secret, returned once; the old one stops working at once) and/or rename it or change its procedure patterns.',
  },
  orgInput({
    id: z.uuid(),
    rotate: z.boolean().default(true),
    name: name(100).optional(),
    patterns: list(
      z
        .string()
        .regex(
          PATTERN_RE,
          'must be *, a procedure name or a namespace pattern like rightsholder.*',
        ),
      200,
    )
      .min(1)
      .optional(),
  }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    // the caller's role as it is once the organization is locked (a demotion may have committed meanwhile)
    const { access } = await lockAsCaller(db, ctx.principal, ctx.org, 'admin');
    const target = await manageableApiKey(db, ctx.principal, access, input.id, {
      rotate: input.rotate,
    });
    // A caller on an API key never comes away holding more than that key grants: the key itself
    // is only narrowed, and another key's new secret is handed out only when its scope (patterns
    // after the change, organizations) lies within the calling key's.
    const caller = ctx.principal.apiKey;
    if (caller && (target.id === caller.id || input.rotate)) {
      const patterns = input.patterns ?? target.patterns;
      if (
        !patternsWithin(patterns, caller.patterns) ||
        !target.organizationIds.every((o) => caller.organizationIds.includes(o))
      ) {
        throw new AppError(
          'API_KEY_SCOPE_DENIED',
          "The key's new scope would reach beyond the scope of the API key making the call",
        );
      }
    }
    // Nor does it widen another key past what that key or the calling key already grants: the
    // other key's secret may be in the caller's hands (rotated earlier within the calling key's
    // scope), and a wider scope for it would be a wider scope for them.
    if (
      caller &&
      input.patterns !== undefined &&
      !patternsWithin(input.patterns, [...caller.patterns, ...target.patterns])
    ) {
      throw new AppError(
        'API_KEY_SCOPE_DENIED',
        "The key's new patterns would reach beyond both its own and those of the API key making the call",
      );
    }
    const { key, record } = await updateApiKey(db, input.id, {
      name: input.name,
      patterns: input.patterns,
      rotate: input.rotate,
    });
    await recordKeyChange(db, ctx.principal, ctx.org, 'apiKey.update', target, record);
    return { ...record, key };
  }),
);
