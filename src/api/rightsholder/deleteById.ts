import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { retireExportsOf } from '../../exports/expire.ts';
import { statementObjectKeys } from '../../ingest/statements.ts';
import { deleteObjects } from '../../storage/objectStore.ts';
import { lockStatementIdsOfRightsholder } from '../../rightsholders/dependents.ts';
import { remove, rightsholderAccess } from '../../rightsholders/service.ts';
import { getRightsholder } from '../../rightsholders/store.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const deleteById = orgProcedure(
  {
    minRole: 'admin',
    scope: 'cli',
    summary:
      'Remove a rightsholder and everything stored under it (no soft delete), its statement files included; dryRun: true only counts what would be removed.',
  },
  orgInput({ id: z.uuid(), dryRun: z.boolean().default(false) }),
).mutation(async ({ ctx, input }) => {
  const { outcome, keys } = await withTransaction(ctx.deps.pool, async (db) => {
    const access = rightsholderAccess(ctx.org, ctx.principal.userId);
    let keys: string[] = [];
    if (!input.dryRun) {
      // the rightsholder is held before its statements are read: a statement being added waits
      // (its foreign key needs the row) and is then seen here, and their rows are held while their
      // files are listed, so no file (a variant recorded meanwhile) is left out
      const { id } = await getRightsholder(db, access, input.id, { lock: true });
      keys = await statementObjectKeys(
        db,
        await lockStatementIdsOfRightsholder(db, ctx.org.id, id),
      );
    }
    const outcome = await remove(db, ctx.principal, access, input.id, input.dryRun);
    // completed exports naming it expire now: their files are deleted by the export_expire job
    if (!input.dryRun) await retireExportsOf(db, ctx.org.id, input.id.toLowerCase());
    return { outcome, keys };
  });
  // the rows are gone with the commit; their files follow
  await deleteObjects(ctx.deps.store, keys, ctx.deps.log);
  return outcome;
});
