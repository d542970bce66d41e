import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { getMapping, updateMapping, type MappingRecord } from '../../ingest/mappings.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list, orgInput } from '../../trpc/schemas.ts';
import { mappingPatchShape } from './inputs.ts';

export const batchUpdate = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Change many of the organization's mappings in one transaction: every update applies or none does (the failing one is named in data.details.index); each change is a new revision.",
  },
  orgInput({ updates: list(z.object({ id: z.uuid(), ...mappingPatchShape }), 100).min(1) }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, async (db) => {
    const updated: MappingRecord[] = [];
    for (const [index, patch] of input.updates.entries()) {
      try {
        // read again under lock each time: a later update of the same mapping builds on the earlier one
        const current = await getMapping(db, ctx.org.id, patch.id, { lock: true });
        updated.push(
          (
            await updateMapping(
              db,
              ctx.principal,
              ctx.org.id,
              current,
              patch,
              'mapping.batchUpdate',
            )
          ).mapping,
        );
      } catch (error) {
        if (error instanceof AppError) {
          throw new AppError(error.errorCode, `updates.${index}: ${error.message}`, {
            cause: error,
            details: { index, ...error.details },
          });
        }
        throw error;
      }
    }
    return { data: updated };
  }),
);
