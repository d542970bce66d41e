import { z } from 'zod';
import { recordOpened as opened } from '../../lenses/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensViewer } from './viewer.ts';

export const recordOpened = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Record that the caller opened a lens (its lastOpenedAt; feeds sort last_opened_desc and recentOnly); a visit, not an activity event.',
  },
  orgInput({ id: z.uuid() }),
).mutation(({ ctx, input }) => opened(ctx.deps.pool, lensViewer(ctx), input.id));
