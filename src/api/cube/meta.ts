import { cubeMeta } from '../../analytics/meta.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const meta = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'The analytics view analytics_full_view: its measures, dimensions and time dimensions with types, titles and definitions (the same as GET /docs/cube-schema.json).',
  },
  orgInput({}),
).query(() => cubeMeta);
