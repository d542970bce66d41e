// Limits of one locateTable call and the error it stops with. Inside the worker a FileError is
// thrown and caught at the worker boundary, where it becomes { ok: false, errorCode, message }.
import type { LocateLimits } from '../fileTypes.ts';

export type FileErrorCode =
  | 'FILE_EMPTY'
  | 'FILE_NO_DATA'
  | 'FILE_IS_HTML'
  | 'FILE_PDF_NO_TEXT'
  | 'FILE_ENCRYPTED'
  | 'FILE_DAMAGED'
  | 'FILE_TOO_LARGE_DECOMPRESSED'
  | 'FILE_UNSUPPORTED_FORMAT'
  | 'FILE_UNSUPPORTED_COMPRESSION'
  | 'FILE_ARCHIVE_TOO_DEEP'
  | 'FILE_INTERLEAVED_TOTALS'
  | 'HEADER_NOT_FOUND'
  | 'FILE_NOT_A_STATEMENT'
  | 'FIELD_TOO_LARGE'
  | 'FILE_TOO_MANY_COLUMNS'
  | 'FILE_TIME_BUDGET_EXCEEDED';

export class FileError extends Error {
  override name = 'FileError';
  constructor(
    readonly errorCode: FileErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface Limits {
  maxDecompressedBytes: number;
  maxEntries: number;
  maxRatio: number;
  timeBudgetMs: number;
  maxFieldBytes: number;
  /** a delimited file up to this size is split into cells whole; a larger one in a head sample and a tail sample, its middle only counted */
  headBytes: number;
  /** bytes read from the end of a large delimited file to find its footer */
  tailBytes: number;
}

// A 1,000,000-row statement is 150-300 MB of text and a sheet of that size inflates to more
// than 1 GB of XML; 2 GiB leaves room while bounding disk use in the work directory.
// Honest compression of statements stays well below 100:1 (XML of sparse sheets the highest);
// a deflate bomb reaches about 1000:1.
export const DEFAULT_LIMITS: Limits = {
  maxDecompressedBytes: 2 * 1024 ** 3,
  maxEntries: 1000,
  maxRatio: 500,
  timeBudgetMs: 10 * 60_000,
  maxFieldBytes: 1024 * 1024,
  headBytes: 4 * 1024 * 1024,
  tailBytes: 1024 * 1024,
};

/** Inflated bytes below which the ratio is not checked: tiny entries compress absurdly well. */
export const RATIO_GRACE_BYTES = 1024 * 1024;

export function resolveLimits(
  given: LocateLimits | undefined,
  internal: Partial<Limits> = {},
): Limits {
  const pick = (v: unknown, d: number) =>
    typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : d;
  return {
    maxDecompressedBytes: pick(given?.maxDecompressedBytes, DEFAULT_LIMITS.maxDecompressedBytes),
    maxEntries: pick(given?.maxEntries, DEFAULT_LIMITS.maxEntries),
    maxRatio: pick(given?.maxRatio, DEFAULT_LIMITS.maxRatio),
    timeBudgetMs: pick(given?.timeBudgetMs, DEFAULT_LIMITS.timeBudgetMs),
    maxFieldBytes: pick(given?.maxFieldBytes, DEFAULT_LIMITS.maxFieldBytes),
    headBytes: pick(internal.headBytes, DEFAULT_LIMITS.headBytes),
    tailBytes: pick(internal.tailBytes, DEFAULT_LIMITS.tailBytes),
  };
}

/** The wall-clock budget; check() is called between chunks and rows. */
export class Deadline {
  private readonly end: number;
  constructor(budgetMs: number) {
    this.end = Date.now() + budgetMs;
  }
  check(): void {
    if (Date.now() > this.end) {
      throw new FileError(
        'FILE_TIME_BUDGET_EXCEEDED',
        'Reading the file took longer than its time budget; it is too large or too complex to read.',
      );
    }
  }
}

/** Counts inflated bytes of one stream against the total cap and the ratio limit. */
export class InflateBudget {
  total = 0;
  constructor(private readonly limits: Limits) {}
  add(bytes: number, entryInflated: number, entryCompressed: number): void {
    this.total += bytes;
    if (this.total > this.limits.maxDecompressedBytes) {
      throw new FileError(
        'FILE_TOO_LARGE_DECOMPRESSED',
        `The file is too large when decompressed (more than ${formatBytes(this.limits.maxDecompressedBytes)}).`,
      );
    }
    if (
      entryInflated > RATIO_GRACE_BYTES &&
      entryInflated > this.limits.maxRatio * Math.max(1, entryCompressed)
    ) {
      throw new FileError(
        'FILE_TOO_LARGE_DECOMPRESSED',
        `The file is too large when decompressed: it expands more than ${this.limits.maxRatio} times, as a compression bomb does.`,
      );
    }
  }
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${Math.round((n / 1024 ** 3) * 10) / 10} GiB`;
  if (n >= 1024 ** 2) return `${Math.round((n / 1024 ** 2) * 10) / 10} MiB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KiB`;
  return `${n} bytes`;
}
