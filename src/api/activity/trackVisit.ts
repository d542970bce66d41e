import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import { subjectTypes } from '../../activity/record.ts';
import { trackVisit as track } from '../../activity/track.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const trackVisit = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "Record that the caller opened a subject; feeds the caller's last-updated rightsholder order and recently opened lenses. Not an activity event.",
  },
  orgInput({
    subjectType: z.enum(subjectTypes),
    subjectId: plainText(200).min(1),
    subjectLabel: plainText(500).optional(),
  }),
).mutation(({ ctx, input }) =>
  track(ctx.deps.pool, {
    ...input,
    organizationId: ctx.org.id,
    userId: ctx.principal.userId,
    rightsholderScope: ctx.org.rightsholderScope,
  }),
);
