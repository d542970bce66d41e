// The caller as the analytics engine sees it (src/analytics/engine.ts Caller), for the procedures
// that read analytics: cube, dataFreshness and insights.
import { takeSnapshot, type Principal } from '../auth/principal.ts';
import type { Caller } from '../analytics/engine.ts';

export function analyticsCallerOf(ctx: {
  org: { id: string; rightsholderScope: string[] | null };
  principal: Principal | null;
}): Caller {
  // the scope was read with the caller's role, the snapshot with the credentials (a PostgreSQL round trip fewer each)
  const snapshot = takeSnapshot(ctx.principal);
  return {
    organizationId: ctx.org.id,
    userId: ctx.principal!.userId,
    rightsholderScope: ctx.org.rightsholderScope,
    ...(snapshot !== undefined ? { snapshot } : {}),
  };
}
