import { z } from 'zod';
import { listActivity } from '../../activity/feed.ts';
import { plainText } from '../../activity/inputs.ts';
import { checkCursorLimit, cursorLimit } from '../../activity/paging.ts';
import { subjectTypes } from '../../activity/record.ts';
import { cursorSchema } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { activityViewer } from './viewer.ts';

export const feed = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Activity events of the organization, newest first, by cursor; optional filters subjectType, actorUserId and action.',
  },
  orgInput({
    cursor: cursorSchema.nullable(),
    limit: cursorLimit,
    subjectType: z.enum(subjectTypes).optional(),
    actorUserId: z.uuid().optional(),
    action: plainText(100).optional(),
  }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const limit = checkCursorLimit(input.limit);
  return listActivity(
    db,
    activityViewer(ctx),
    { subjectType: input.subjectType, actorUserId: input.actorUserId, action: input.action },
    { cursor: input.cursor, limit },
  );
});
