import { listTags as tagsOf } from '../../lenses/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensViewer } from './viewer.ts';

export const listTags = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Every tag on the lenses the caller may see, alphabetically, with how many lenses carry it.',
  },
  orgInput({}),
).query(async ({ ctx }) => ({ data: await tagsOf(ctx.deps.pool, lensViewer(ctx)) }));
