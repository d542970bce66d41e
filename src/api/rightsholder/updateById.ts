import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { retireExportsOf } from '../../exports/expire.ts';
import { rightsholderAccess, update } from '../../rightsholders/service.ts';
import { getRightsholder } from '../../rightsholders/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { optionalFields, rightsholderFields } from './fields.ts';

export const updateById = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Update a rightsholder: name, legal name, aliases, identifiers, publisher-group flag; isDeleted soft-deletes or restores it.',
  },
  orgInput({ id: z.uuid(), ...optionalFields, name: rightsholderFields.name }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const access = rightsholderAccess(ctx.org, ctx.principal.userId);
    const current = await getRightsholder(db, access, input.id, { lock: true });
    const updated = await update(db, ctx.principal, current, input, 'rightsholder.updateById');
    // completed exports naming a rightsholder flagged deleted expire now (their files are deleted by the export_expire job)
    if (input.isDeleted === true) await retireExportsOf(db, ctx.org.id, current.id);
    return updated;
  }),
);
