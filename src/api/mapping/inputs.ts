// Input pieces shared by the mapping procedures. Everything is bounded, and text that reaches
// PostgreSQL is refused with a NUL character (text and jsonb cannot store it).
import { z } from 'zod';
import { plainText, storableJson, withoutNul } from '../../activity/inputs.ts';
import { mappingFieldsSchema } from '../../ingest/mappingFields.ts';

const noNul = 'must not contain NUL characters';

/** The header cells of a statement, as they appear (blank cells included: they keep positions). */
export const headersInput = z
  .array(z.string().max(1_000).refine(withoutNul, noNul))
  .min(1)
  .max(1_000);

/** A header hash: 64 hex digits (compared lower-case). */
export const headerHashInput = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'must be a SHA-256 header hash: 64 hex digits')
  .transform((v) => v.toLowerCase());

/** A mapping's fields: the documented field language of src/ingest/mappingFields.ts, without NUL characters. */
export const fieldsInput = mappingFieldsSchema.refine(
  (fields) => !JSON.stringify(fields).includes('\\u0000'),
  noNul,
);

export const mappingName = plainText(200).trim();

export const fileCategoriesInput = storableJson(10_000, 10).nullable();

/**
 * The specification types distributorId as uuid[] on updateById; a mapping has one distributor, so
 * a single id, a list of at most one, or null (none) are all accepted.
 */
export const distributorIdInput = z
  .union([z.uuid(), z.array(z.uuid()).max(1), z.null()])
  .transform((v) => (Array.isArray(v) ? (v[0] ?? null) : v));

/** The changeable parts of a mapping (omitted: unchanged). */
export const mappingPatchShape = {
  name: mappingName.optional(),
  headers: headersInput.optional(),
  fields: fieldsInput.optional(),
  distributorId: distributorIdInput.optional(),
  fileCategories: fileCategoriesInput.optional(),
};
