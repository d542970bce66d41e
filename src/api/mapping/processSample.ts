import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import { AppError } from '../../errors.ts';
import {
  missingRequiredFields,
  variablesSchema,
  type MappingFields,
} from '../../ingest/mappingFields.ts';
import { getMapping } from '../../ingest/mappings.ts';
import { previewSample } from '../../ingest/preview.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from '../upload/inputs.ts';
import { fieldsInput } from './inputs.ts';

/** The most rows one preview reads: it is a preview, the pipeline does the rest. */
export const MAX_SAMPLE_ROWS = 1_000;
/** the specification's default endRow, and the default window from a later startRow */
const DEFAULT_END_ROW = 5;

export const processSample = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Preview a mapping on real rows of a statement (data rows startRow inclusive to endRow exclusive, default 0 to 5, or startRow + 5 from startRow 5 on; at most 1000) through exactly the code path the pipeline uses; nothing is saved. mapping: the fields to try (the five required ones included), else those of mappingId.',
  },
  orgInput({
    statementId: storedId(),
    startRow: z.number().int().min(0).max(100_000_000).default(0),
    endRow: z
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .meta({
        default: DEFAULT_END_ROW,
        description: `default ${DEFAULT_END_ROW}; when startRow is ${DEFAULT_END_ROW} or more, startRow + ${DEFAULT_END_ROW}`,
      }),
    mappingId: z.uuid().optional(),
    mapping: fieldsInput.optional(),
    // the values of the mapping's variables; without them, the statement's own (given with its upload)
    variables: variablesSchema.optional(),
    fileName: plainText(255).default(''),
  })
    // the specification's default endRow is 5: from a later startRow without endRow, the next 5
    // rows, rather than a range ending before it starts (as fileStorage.getSample's default page)
    .transform((v) => ({
      ...v,
      endRow:
        v.endRow ??
        (v.startRow >= DEFAULT_END_ROW ? v.startRow + DEFAULT_END_ROW : DEFAULT_END_ROW),
    }))
    .refine((v) => v.endRow > v.startRow, {
      message: 'must be greater than startRow',
      path: ['endRow'],
    })
    .refine((v) => v.endRow - v.startRow <= MAX_SAMPLE_ROWS, {
      message: `at most ${MAX_SAMPLE_ROWS} rows per preview`,
      path: ['endRow'],
    })
    .refine((v) => v.mapping !== undefined || v.mappingId !== undefined, {
      message: 'give mapping (fields) or mappingId',
      path: ['mapping'],
    }),
).mutation(async ({ ctx, input }) => {
  const saved =
    input.mappingId === undefined
      ? null
      : await getMapping(ctx.deps.pool, ctx.org.id, input.mappingId);
  const fields: MappingFields = input.mapping ?? saved!.fields;
  const missing = missingRequiredFields(fields);
  if (missing.length > 0) {
    throw new AppError(
      'MAPPING_REQUIRED_FIELDS_MISSING',
      `The mapping must give ${missing.map((f) => `mapping.${f}`).join(', ')}`,
      {
        details: { fields: missing.map((f) => ({ path: `mapping.${f}`, message: 'is required' })) },
      },
    );
  }
  const preview = await previewSample(ctx.deps, {
    organizationId: ctx.org.id,
    scope: ctx.org.rightsholderScope,
    statementId: input.statementId,
    fields,
    startRow: input.startRow,
    endRow: input.endRow,
    variables: input.variables,
    fileName: input.fileName,
  });
  return {
    statementId: input.statementId,
    mappingId: saved?.id ?? null,
    startRow: input.startRow,
    endRow: input.endRow,
    fields,
    ...preview,
  };
});
