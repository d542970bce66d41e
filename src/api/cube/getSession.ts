import { getOrCreateCubeSession } from '../../analytics/sessions.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const getSession = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "Gets or creates an embed session of the organization: a short-lived bearer token (Authorization: Bearer cs_…) that authorizes only cube reads of this organization, with the caller's data access.",
  },
  orgInput({}),
).query(async ({ ctx }) =>
  getOrCreateCubeSession(
    ctx.deps.pool,
    {
      organizationId: ctx.org.id,
      userId: ctx.principal!.userId,
      apiKeyId: ctx.principal!.apiKey?.id ?? null,
      oauthGrantId: ctx.principal!.oauth?.grantId ?? null,
      patterns: ctx.principal!.apiKey?.patterns ?? null,
    },
    ctx.deps.config.analytics.sessionTtlSeconds,
  ),
);
