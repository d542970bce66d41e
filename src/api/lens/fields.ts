// The input fields of a lens. description, viewName and payload are any JSON value, bounded in
// size and depth; tags are trimmed and de-duplicated without case (the first spelling stays).
import { z } from 'zod';
import { storableJson, withoutNul } from '../../activity/inputs.ts';
import { lensKinds, lensScopes, uniqueTags } from '../../lenses/store.ts';
import { list, name } from '../../trpc/schemas.ts';

const noNul = 'must not contain NUL characters';

export const tag = z.string().trim().min(1).max(100).refine(withoutNul, noNul);

export const lensFields = {
  name: name(200).refine(withoutNul, noNul),
  // JSON-valued fields with a refinement are required in zod 4 unless marked optional
  description: storableJson(10_000, 10).optional(),
  scope: z.enum(lensScopes),
  tags: list(tag, 50).transform(uniqueTags),
  kind: z.enum(lensKinds),
  viewName: storableJson(1_000, 5).optional(),
  payload: storableJson(100_000, 32),
};

/** Every lens has a payload: required on create (z.unknown() alone would let it be absent), never null. */
export const requiredPayload = lensFields.payload.refine(
  (value) => value !== undefined && value !== null,
  'Required: any JSON value but null',
);
export const optionalPayload = lensFields.payload
  .refine((value) => value !== null, 'must be a JSON value other than null')
  .optional();
