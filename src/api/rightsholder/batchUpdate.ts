import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { retireExportsOf } from '../../exports/expire.ts';
import { rightsholderAccess, update } from '../../rightsholders/service.ts';
import { lockRightsholders, type Rightsholder } from '../../rightsholders/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';
import { optionalFields } from './fields.ts';

export const batchUpdate = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Update many rightsholders in one transaction: all updates apply or none (the failing one is named in data.details.index).',
  },
  orgInput({ updates: list(z.object({ id: z.uuid(), ...optionalFields }), 500).min(1) }),
).mutation(({ ctx, input }) => {
  // the specification states member as this procedure's minimum role (updateById needs writer):
  // followed as written, see docs/organizations.md "Rightsholders"
  return withTransaction(ctx.deps.pool, async (db) => {
    const access = rightsholderAccess(ctx.org, ctx.principal.userId);
    // ids as stored (a uuid may arrive in capitals): the rows are keyed by them
    const updates = input.updates.map((u) => ({ ...u, id: u.id.toLowerCase() }));
    const current = await lockRightsholders(db, access, [...new Set(updates.map((u) => u.id))]);
    const updated: Rightsholder[] = [];
    for (const [index, patch] of updates.entries()) {
      const before = current.get(patch.id);
      if (!before)
        throw new AppError(
          'RIGHTSHOLDER_NOT_FOUND',
          `updates.${index}: no rightsholder with that id`,
          { details: { index } },
        );
      try {
        const after = await update(db, ctx.principal, before, patch, 'rightsholder.batchUpdate');
        current.set(patch.id, after);
        updated.push(after);
      } catch (error) {
        if (error instanceof AppError)
          throw new AppError(error.errorCode, `updates.${index}: ${error.message}`, {
            cause: error,
            details: { index },
          });
        throw error;
      }
    }
    // as updateById: completed exports naming a rightsholder flagged deleted expire now (their
    // files are deleted by the export_expire job), in the same transaction as the flag
    const flagged = new Set(updates.filter((u) => u.isDeleted === true).map((u) => u.id));
    for (const id of flagged)
      if (current.get(id)!.isDeleted) await retireExportsOf(db, ctx.org.id, id);
    return { data: updated };
  });
});
