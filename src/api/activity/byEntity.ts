import { z } from 'zod';
import { hasVisibleActivity, listActivity, type ActivityViewer } from '../../activity/feed.ts';
import { plainText } from '../../activity/inputs.ts';
import { checkCursorLimit, cursorLimit } from '../../activity/paging.ts';
import { subjectTypes, type SubjectType } from '../../activity/record.ts';
import { canonicalSubjectId, subjectLabel } from '../../activity/track.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError, type ErrorCode } from '../../errors.ts';
import { cursorSchema } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { activityViewer } from './viewer.ts';

const notFoundCode: Partial<Record<SubjectType, ErrorCode>> = {
  rightsholder: 'RIGHTSHOLDER_NOT_FOUND',
  lens: 'LENS_NOT_FOUND',
};

/** Whether the subject exists and the viewer may see it; false for types this service does not keep. */
async function subjectIsVisible(
  db: Queryable,
  viewer: ActivityViewer,
  subjectType: SubjectType,
  subjectId: string,
): Promise<boolean> {
  try {
    return (await subjectLabel(db, viewer, subjectType, subjectId)) !== undefined;
  } catch (error) {
    if (error instanceof AppError && error.code === 'NOT_FOUND') return false;
    throw error;
  }
}

export const byEntity = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "One subject's activity events, newest first, by cursor; a removed subject keeps the history the caller may see.",
  },
  orgInput({
    subjectType: z.enum(subjectTypes),
    subjectId: plainText(200).min(1),
    cursor: cursorSchema.nullable(),
    limit: cursorLimit,
  }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const limit = checkCursorLimit(input.limit);
  const viewer = activityViewer(ctx);
  const subjectId = canonicalSubjectId(input.subjectId);
  // A subject that is visible, or gone with history the caller may see; anything else (another
  // organization's id, another member's personal lens) is NOT_FOUND.
  if (
    !(await subjectIsVisible(db, viewer, input.subjectType, subjectId)) &&
    !(await hasVisibleActivity(db, viewer, input.subjectType, subjectId))
  ) {
    throw new AppError(notFoundCode[input.subjectType] ?? 'ACTIVITY_SUBJECT_NOT_FOUND');
  }
  return listActivity(
    db,
    viewer,
    { subjectType: input.subjectType, subjectId },
    { cursor: input.cursor, limit },
  );
});
