import { computeHeaderHash } from '../../ingest/headerHash.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { createMapping } from '../../ingest/mappings.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import {
  distributorIdInput,
  fieldsInput,
  fileCategoriesInput,
  headerHashInput,
  headersInput,
  mappingName,
} from './inputs.ts';

export const create = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Create the organization's mapping for a statement layout: headers, their headerHash (must equal the DESIGN header hash of headers) and fields (the five required ones included; columns only from headers). It then wins over the shared library's mapping for those headers.",
  },
  orgInput({
    name: mappingName.default(''),
    headers: headersInput,
    headerHash: headerHashInput,
    fields: fieldsInput.default({}),
    distributorId: distributorIdInput.default(null),
    fileCategories: fileCategoriesInput.optional(),
  }),
).mutation(({ ctx, input }) => {
  const expected = computeHeaderHash(input.headers);
  if (input.headerHash !== expected) {
    throw new AppError('MAPPING_HEADER_HASH_MISMATCH', undefined, {
      details: { given: input.headerHash, expected },
    });
  }
  return withTransaction(ctx.deps.pool, (db) =>
    createMapping(db, ctx.principal, ctx.org.id, {
      name: input.name,
      headers: input.headers,
      fields: input.fields,
      distributorId: input.distributorId,
      fileCategories: input.fileCategories ?? null,
    }),
  );
});
