import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { ObjectChangedError } from '../../storage/objectStore.ts';
import { storedVariantsOf, variantToRead } from '../../ingest/variants.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { visibleStatement } from '../../ingest/uploadStore.ts';
import { fileVariants } from './variants.ts';

const MAX_SAMPLE_ROWS = 5000;
/** the specification's default endRow, and the default page from a later startRow */
const DEFAULT_END_ROW = 200;

export const getSample = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'Rows startRow (default 0) to endRow (default 200, or startRow + 200 from startRow 200 on; exclusive; at most 5000 rows) of one variant of a statement file, as { columns, rows }.',
  },
  orgInput({
    type: z.enum(fileVariants).exclude(['original-excel']),
    file: z.uuid().describe('the statement id'),
    startRow: z.number().int().min(0).max(100_000_000).default(0),
    endRow: z
      .number()
      .int()
      .min(0)
      .max(100_000_000)
      .optional()
      .meta({
        default: DEFAULT_END_ROW,
        description: `default ${DEFAULT_END_ROW}; when startRow is ${DEFAULT_END_ROW} or more, startRow + ${DEFAULT_END_ROW}`,
      }),
  })
    // the specification's default endRow is 200: a page from a later startRow without endRow is
    // the next 200 rows, rather than an empty or backwards range
    .transform((i) => ({
      ...i,
      endRow:
        i.endRow ??
        (i.startRow >= DEFAULT_END_ROW ? i.startRow + DEFAULT_END_ROW : DEFAULT_END_ROW),
    }))
    .refine((i) => i.endRow >= i.startRow && i.endRow - i.startRow <= MAX_SAMPLE_ROWS, {
      message: `endRow must be at least startRow and at most ${MAX_SAMPLE_ROWS} rows after it`,
      path: ['endRow'],
    }),
).query(async ({ ctx, input }) => {
  const s = await visibleStatement(ctx.deps.pool, ctx.org, input.file);
  const { variants, located } = await storedVariantsOf(ctx.deps.pool, s.id);
  let type: string = input.type;
  // a workbook's, a decoded or an unpacked original is sampled through its table as UTF-8 CSV
  if (type === 'original' && variants.single) type = 'single';
  const key =
    type === 'original' ? s.objectKey : await variantToRead(ctx.deps, s.id, type, variants[type]);
  if (!key || (type === 'original' && !located))
    throw new AppError('FILE_VARIANT_NOT_FOUND', `The statement has no ${input.type} file (yet)`);
  const dir = path.join(tmpdir(), 'royalty-sample', randomBytes(6).toString('hex'));
  await mkdir(dir, { recursive: true });
  try {
    const file = path.join(dir, 'variant');
    try {
      // the upload as completed, never bytes PUT to its URL afterwards
      await pipeline(
        await ctx.deps.store.getStream(key, {
          expectEtag: key === s.objectKey ? s.objectEtag : null,
        }),
        createWriteStream(file),
      );
    } catch (error) {
      if (error instanceof ObjectChangedError) {
        throw new AppError(
          'UPLOAD_OBJECT_CHANGED',
          'The uploaded file was replaced after the upload was completed (a PUT to its URL afterwards): it is not read. Upload the file again.',
        );
      }
      throw new AppError('FILE_VARIANT_NOT_FOUND', `The statement has no ${input.type} file (yet)`);
    }
    const kind =
      type === 'normalized'
        ? 'parquet'
        : type === 'original' || type === 'single'
          ? 'raw_delimited'
          : 'csv_with_header';
    const result = await ctx.deps.threads.sample({
      path: file,
      kind,
      delimiter: type === 'original' ? located?.delimiter : ',',
      startRow: input.startRow,
      endRow: input.endRow,
    });
    return {
      type: input.type,
      startRow: input.startRow,
      endRow: input.startRow + result.rows.length,
      columns: result.columns,
      rows: result.rows,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
