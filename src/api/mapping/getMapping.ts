import { z } from 'zod';
import { AppError } from '../../errors.ts';
import {
  findMappingByHeaderHash,
  getMapping as getVisibleMapping,
  type MappingRecord,
} from '../../ingest/mappings.ts';
import type { Queryable } from '../../db/pool.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { headerHashInput } from './inputs.ts';

export const getMappingInput = orgInput({
  id: z.uuid().optional(),
  headerHash: headerHashInput.optional(),
}).refine((v) => v.id !== undefined || v.headerHash !== undefined, {
  message: 'give id or headerHash',
  path: ['id'],
});

/** By id; or by header hash, the organization's own mapping first, else the shared library's. */
export async function lookupMapping(
  db: Queryable,
  organizationId: string,
  input: { id?: string | undefined; headerHash?: string | undefined },
): Promise<MappingRecord> {
  if (input.id !== undefined) {
    const mapping = await getVisibleMapping(db, organizationId, input.id);
    if (input.headerHash !== undefined && mapping.headerHash !== input.headerHash)
      throw new AppError('MAPPING_NOT_FOUND', 'The mapping with that id has another header hash');
    return mapping;
  }
  const mapping = await findMappingByHeaderHash(db, organizationId, input.headerHash!);
  if (!mapping) throw new AppError('MAPPING_NOT_FOUND');
  return mapping;
}

export const getMapping = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "One mapping by id, or the one statements with a header hash use: the organization's own, else the shared library's (source tells which).",
  },
  getMappingInput,
).query(({ ctx, input }) => lookupMapping(ctx.deps.pool, ctx.org.id, input));
