// The input fields of a rightsholder, shared by create, updateById and batchUpdate. Lists are
// trimmed and de-duplicated; null stands for an empty list. Text is taken in Unicode NFC, so a
// name typed with a combining accent is the same name as one with the composed letter (the unique
// index compares the stored text), and holds no control character (a line break, a tab, NUL).
import { z } from 'zod';
import { storableJson } from '../../activity/inputs.ts';
import { list, name } from '../../trpc/schemas.ts';

function distinct(values: string[] | null): string[] {
  return [...new Set(values ?? [])];
}

const identifierList = (item: z.ZodType<string, string>) =>
  list(item, 100).nullable().transform(distinct);

const noControl = 'must not contain control characters (a line break, a tab, NUL)';
const withoutControl = (value: string) => !/\p{Cc}/u.test(value);
/** something to see: not only spaces and invisible format characters (a zero-width space) */
const visible = (value: string) => /[^\p{White_Space}\p{Cc}\p{Cf}]/u.test(value);
const nfc = (value: string) => value.normalize('NFC');

/** Text in NFC, trimmed, without control characters, `min` to `max` characters (after NFC). */
const text = (min: number, max: number) =>
  z
    .string()
    .transform(nfc)
    .pipe(z.string().trim().min(min).max(max).refine(withoutControl, noControl));

const identifier = text(1, 100);

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
  name: z
    .string()
    .transform(nfc)
    .pipe(
      name(200).refine(withoutControl, noControl).refine(visible, 'must have a visible character'),
    ),
  legalName: text(0, 500)
    .nullable()
    .transform((v) => (v === '' ? null : v)),
  aliases: identifierList(text(1, 200).refine(visible, 'must have a visible character')),
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
