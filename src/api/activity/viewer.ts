import type { ActivityViewer } from '../../activity/feed.ts';

/** The caller as the activity log reads for them: the scope is the one the procedure middleware loaded with the role. */
export function activityViewer(ctx: {
  org: { id: string; rightsholderScope: string[] | null };
  principal: { userId: string };
}): ActivityViewer {
  return {
    organizationId: ctx.org.id,
    userId: ctx.principal.userId,
    rightsholderScope: ctx.org.rightsholderScope,
  };
}
