import { z } from 'zod';
import { trackVisit } from '../../activity/track.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const trackOpen = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Record that the caller opened a rightsholder; the same as activity.trackVisit with subjectType rightsholder.',
    deprecated: 'Use activity.trackVisit with subjectType "rightsholder".',
  },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) =>
  trackVisit(ctx.deps.pool, {
    organizationId: ctx.org.id,
    userId: ctx.principal.userId,
    rightsholderScope: ctx.org.rightsholderScope,
    subjectType: 'rightsholder',
    subjectId: input.id,
  }),
);
