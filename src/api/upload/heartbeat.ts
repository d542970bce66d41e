import { z } from 'zod';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { callerScope } from './shared.ts';
import { UPLOAD_TTL_SECONDS } from './uploadFile.ts';

export const heartbeat = orgProcedure(
  { minRole: 'writer', scope: '', summary: 'Extend the time-to-live of direct uploads still in progress (status uploading).' },
  orgInput({ statementIds: z.array(z.uuid()).min(1).max(1000) }),
).mutation(async ({ ctx, input }) => {
  const scope = await callerScope(ctx.deps.pool, { organizationId: ctx.org.id, userId: ctx.principal.userId });
  const { rows } = await ctx.deps.pool.query<{ id: string; expiresAt: Date }>(
    `UPDATE statements SET upload_expires_at = clock_timestamp() + make_interval(secs => $4), updated_at = clock_timestamp()
     WHERE organization_id = $1 AND id = ANY ($2) AND status = 'uploading' AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))
     RETURNING id, upload_expires_at AS "expiresAt"`,
    [ctx.org.id, input.statementIds, scope, UPLOAD_TTL_SECONDS],
  );
  const extended = new Map(rows.map((r) => [r.id, r.expiresAt]));
  return {
    extended: input.statementIds.filter((id) => extended.has(id)).map((id) => ({ statementId: id, expiresAt: extended.get(id)! })),
    notExtended: input.statementIds.filter((id) => !extended.has(id)),
  };
});
