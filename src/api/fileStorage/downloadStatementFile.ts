import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { storedVariantsOf, variantToRead } from '../../ingest/variants.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { visibleStatement } from '../../ingest/uploadStore.ts';
import { fileVariants } from './variants.ts';

const DOWNLOAD_TTL_SECONDS = 10 * 60;

const extensions: Record<string, string> = {
  normalized: 'parquet',
  trimmed: 'csv',
  single: 'csv',
  removed: 'csv',
  standardized: 'csv',
};

export const downloadStatementFile = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'A short-lived presigned download URL (attachment) for one variant of a statement file: normalized (Parquet), trimmed, original, single, removed, standardized, original-excel.',
  },
  orgInput({
    type: z.enum(fileVariants),
    file: z.uuid().describe('the statement id'),
    fileName: z.string().trim().min(1).max(255).optional(),
    originalExcelFile: z
      .string()
      .trim()
      .max(255)
      .optional()
      .describe(
        'the name the original-excel download is saved under (as fileName); only with type original-excel; empty is as absent',
      ),
  })
    .transform(({ originalExcelFile, ...rest }) => ({
      ...rest,
      originalExcelFile: originalExcelFile === '' ? undefined : originalExcelFile,
    }))
    // accepted and ignored, it would look honoured: it applies to the workbook download only
    .refine((i) => i.originalExcelFile === undefined || i.type === 'original-excel', {
      message:
        'originalExcelFile names the original-excel download: give fileName for the other types',
      path: ['originalExcelFile'],
    })
    .refine(
      (i) =>
        i.originalExcelFile === undefined ||
        i.fileName === undefined ||
        i.fileName === i.originalExcelFile,
      {
        message:
          'fileName and originalExcelFile name the same download: give one, or the same name',
        path: ['originalExcelFile'],
      },
    ),
).mutation(async ({ ctx, input }) => {
  const s = await visibleStatement(ctx.deps.pool, ctx.org, input.file);
  const variants: Record<string, string> = {
    original: s.objectKey,
    ...(await storedVariantsOf(ctx.deps.pool, s.id)).variants,
  };
  const key = await variantToRead(ctx.deps, s.id, input.type, variants[input.type]);
  const object = key ? await ctx.deps.store.head(key) : undefined;
  if (!key || !object)
    throw new AppError('FILE_VARIANT_NOT_FOUND', `The statement has no ${input.type} file (yet)`);
  // the upload as completed, never bytes PUT to its URL afterwards
  if (key === s.objectKey && s.objectEtag && object.etag !== s.objectEtag) {
    throw new AppError(
      'UPLOAD_OBJECT_CHANGED',
      'The uploaded file was replaced after the upload was completed (a PUT to its URL afterwards): it is not served. Upload the file again.',
    );
  }
  const name = input.fileName ?? input.originalExcelFile ?? defaultName(input.type, key, s);
  const url = await ctx.deps.store.presignGet(key, name, DOWNLOAD_TTL_SECONDS);
  return {
    url,
    fileName: name,
    expiresAt: new Date(Date.now() + DOWNLOAD_TTL_SECONDS * 1000).toISOString(),
  };
});

/**
 * The name a variant downloads as: the upload's own for the original (and for the workbook when
 * the upload is it), the unpacked workbook's own name when it came out of an archive (the last
 * segment of its key, src/ingest/pipeline.ts workbookKeyName), else `<upload name>.<type>.<ext>`.
 */
function defaultName(
  type: string,
  key: string,
  s: { fileName: string; objectKey: string },
): string {
  if (type === 'original' || (type === 'original-excel' && key === s.objectKey)) return s.fileName;
  if (type === 'original-excel') {
    try {
      return decodeURIComponent(key.slice(key.lastIndexOf('/') + 1));
    } catch {
      return s.fileName;
    }
  }
  return `${s.fileName.replace(/\.[^.]+$/, '')}.${type}.${extensions[type] ?? 'csv'}`;
}
