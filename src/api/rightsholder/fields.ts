// The input fields of a rightsholder, shared by create, updateById and batchUpdate. Lists are
// trimmed and de-duplicated; null stands for an empty list.
import { z } from 'zod';
import { storableJson, withoutNul } from '../../activity/inputs.ts';
import { list, name } from '../../trpc/schemas.ts';

function distinct(values: string[] | null): string[] {
  return [...new Set(values ?? [])];
}

const identifierList = (item: z.ZodType<string, string>) => list(item, 100).nullable().transform(distinct);

const noNul = 'must not contain NUL characters';
const identifier = z.string().trim().min(1).max(100).refine(withoutNul, noNul);

// IPI name numbers are 11 digits, often written without their leading zeros or with spaces.
const ipiNameNumber = z
  .string()
  .max(50)
  .transform((v) => v.replace(/[\s.-]/g, ''))
  .pipe(z.string().regex(/^\d{1,11}$/, 'must be an IPI name number: up to 11 digits'))
  .transform((v) => v.padStart(11, '0'));

// ISNI: 16 characters, the last a check character that may be X; usually written in groups of four.
const isni = z
  .string()
  .max(50)
  .transform((v) => v.replace(/[\s-]/g, '').toUpperCase())
  .pipe(z.string().regex(/^\d{15}[\dX]$/, 'must be an ISNI: 15 digits and a check digit or X'));

export const rightsholderFields = {
  name: name(200).refine(withoutNul, noNul),
  legalName: z
    .string()
    .trim()
    .max(500)
    .refine(withoutNul, noNul)
    .nullable()
    .transform((v) => (v === '' ? null : v)),
  aliases: identifierList(z.string().trim().min(1).max(200).refine(withoutNul, noNul)),
  ipiNameNumbers: identifierList(ipiNameNumber),
  isnis: identifierList(isni),
  /** artist ids at music-streaming services */
  streamingArtistIds: identifierList(identifier),
  /** artist ids at download and streaming stores */
  storeArtistIds: identifierList(identifier),
  /** channel ids at video platforms */
  videoChannelIds: identifierList(identifier),
  isPublisherGroup: z.boolean(),
  // any JSON value (the specification's type), accepted so clients can send a record back; the
  // server ignores it and always records the caller
  lastUpdatedById: storableJson(1_000, 5),
  isDeleted: z.boolean(),
};

/** The changeable fields, each optional (omitted: unchanged). */
export const optionalFields = {
  name: rightsholderFields.name.optional(),
  legalName: rightsholderFields.legalName.optional(),
  aliases: rightsholderFields.aliases.optional(),
  ipiNameNumbers: rightsholderFields.ipiNameNumbers.optional(),
  isnis: rightsholderFields.isnis.optional(),
  streamingArtistIds: rightsholderFields.streamingArtistIds.optional(),
  storeArtistIds: rightsholderFields.storeArtistIds.optional(),
  videoChannelIds: rightsholderFields.videoChannelIds.optional(),
  isPublisherGroup: rightsholderFields.isPublisherGroup.optional(),
  lastUpdatedById: rightsholderFields.lastUpdatedById.optional(),
  isDeleted: rightsholderFields.isDeleted.optional(),
};
