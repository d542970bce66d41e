import { z } from 'zod';
import { getLens } from '../../lenses/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { lensViewer } from './viewer.ts';

export const get = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary: "One lens with its payload, the caller's pin and when the caller last opened it.",
  },
  orgInput({ id: z.uuid() }),
).query(({ ctx, input }) => getLens(ctx.deps.pool, lensViewer(ctx), input.id));
