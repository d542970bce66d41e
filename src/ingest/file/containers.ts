// Archives, inflated with their limits enforced while inflating: gzip streams, zip archives
// (yauzl, which also checks every entry inflates to exactly its declared size) and the tar
// inside a .tar.gz. Every byte out counts against maxDecompressedBytes; an entry expanding more
// than maxRatio times is a bomb.
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createGunzip } from 'node:zlib';
import yauzl from 'yauzl';
import { type Deadline, FileError, InflateBudget, type Limits, formatBytes } from './limits.ts';
import { SUPPORTED } from './sniff.ts';

const damaged = (what: string, cause: unknown) =>
  new FileError(
    'FILE_DAMAGED',
    `The ${what} is damaged or incomplete (${String((cause as Error)?.message ?? cause).slice(0, 120)}); download it again.`,
  );

/** Writes a counted stream to a file; a FileError from the counter wins over the stream's own. */
async function drain(
  source: Readable,
  out: string,
  onChunk: (n: number) => void,
  deadline: Deadline,
  what: string,
): Promise<void> {
  let limitError: FileError | null = null;
  const sink = createWriteStream(out);
  try {
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          try {
            onChunk(chunk.length);
            deadline.check();
          } catch (error) {
            limitError = error as FileError;
            throw error;
          }
          yield chunk;
        }
      },
      sink,
    );
  } catch (error) {
    if (limitError) throw limitError;
    if (error instanceof FileError) throw error;
    throw damaged(what, error);
  }
}

export async function gunzipTo(
  file: string,
  out: string,
  budget: InflateBudget,
  deadline: Deadline,
): Promise<void> {
  const compressed = (await stat(file)).size;
  let inflated = 0;
  await drain(
    createReadStream(file).pipe(createGunzip()),
    out,
    (n) => budget.add(n, (inflated += n), compressed),
    deadline,
    'gzip file',
  );
}

export interface ZipEntryInfo {
  name: string;
  uncompressedSize: number;
  compressedSize: number;
  entry: yauzl.Entry;
}

export interface OpenZip {
  entries: ZipEntryInfo[];
  /** inflates one entry into a file */
  extract(entry: ZipEntryInfo, out: string): Promise<void>;
  /** inflates one entry and hands each chunk to `sink` without keeping it */
  read(entry: ZipEntryInfo, sink: (chunk: Buffer) => void): Promise<void>;
  /**
   * one entry's inflated bytes as a stream, not counted against the budget: only for an entry
   * already read through `read` or `extract` (its size and CRC-32 are validated, so it cannot
   * inflate to more, or to other bytes, the second time)
   */
  reread(entry: ZipEntryInfo): Promise<Readable>;
  close(): void;
}

/** Zip compression methods by number (APPNOTE 4.4.5): only stored (0) and deflated (8) are read. */
const METHODS: Record<number, string> = {
  1: 'Shrink',
  6: 'Implode',
  9: 'Deflate64',
  12: 'bzip2',
  14: 'LZMA',
  93: 'Zstandard',
  95: 'XZ',
  96: 'JPEG',
  97: 'WavPack',
  98: 'PPMd',
};

/** Why an entry cannot be read at all (encrypted, an unknown method), before anything is inflated. */
function refuseEntry(e: ZipEntryInfo): FileError | null {
  if (e.entry.isEncrypted())
    return new FileError(
      'FILE_ENCRYPTED',
      'The archive is password-protected; extract it and upload the statement itself.',
    );
  const method = e.entry.compressionMethod;
  if (method === 0 || method === 8) return null;
  return new FileError(
    'FILE_UNSUPPORTED_COMPRESSION',
    `"${e.name}" is compressed with ${METHODS[method] ?? `method ${method}`}, which is not read: create the archive again with ordinary zip (Deflate), or upload the statement file itself.`,
  );
}

/** A yauzl error as ours: a split archive is a format we do not read, anything else is damage. */
function zipError(cause: unknown): FileError {
  if (cause instanceof FileError) return cause;
  if (/multi-disk/i.test(String((cause as Error)?.message))) {
    return new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `The archive is split into several parts (a multi-volume zip): join it into one archive, or upload the statement file itself. ${SUPPORTED}`,
    );
  }
  return damaged('zip archive', cause);
}

export async function openZip(
  file: string,
  limits: Limits,
  budget: InflateBudget,
  deadline: Deadline,
): Promise<OpenZip> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(
      file,
      {
        lazyEntries: true,
        autoClose: false,
        validateEntrySizes: true,
        strictFileNames: false,
        decodeStrings: true,
      },
      (err, z) => (err || !z ? reject(zipError(err)) : resolve(z)),
    );
  });
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new FileError(
      'FILE_TOO_LARGE_DECOMPRESSED',
      `The archive holds ${zip.entryCount} entries, more than the ${limits.maxEntries} accepted.`,
    );
  }
  const entries = await listZipEntries(zip).catch((error) => {
    zip.close();
    throw error;
  });
  try {
    refuseDeclaredSizes(entries, limits);
  } catch (error) {
    zip.close();
    throw error;
  }
  const chunks = (info: ZipEntryInfo) => zipEntryChunks(zip, info, budget, deadline);
  return {
    entries,
    async extract(info, out) {
      try {
        await pipeline(Readable.from(chunks(info)), createWriteStream(out));
      } catch (error) {
        throw zipError(error);
      }
    },
    async read(info, sink) {
      for await (const chunk of chunks(info)) sink(chunk);
    },
    reread: (info) => zipEntryStream(zip, info),
    close: () => zip.close(),
  };
}

/** The archive's entries, from its central directory. */
function listZipEntries(zip: yauzl.ZipFile): Promise<ZipEntryInfo[]> {
  return new Promise<ZipEntryInfo[]>((resolve, reject) => {
    const list: ZipEntryInfo[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      list.push({
        name: entry.fileName,
        uncompressedSize: entry.uncompressedSize,
        compressedSize: entry.compressedSize,
        entry,
      });
      zip.readEntry();
    });
    zip.on('end', () => resolve(list));
    zip.on('error', (err) => reject(zipError(err)));
    zip.readEntry();
  });
}

/** The declared sizes already tell most bombs: refuse before inflating anything. */
function refuseDeclaredSizes(entries: readonly ZipEntryInfo[], limits: Limits): void {
  let declared = 0;
  for (const e of entries) {
    declared += e.uncompressedSize;
    const refused = refuseEntry(e);
    if (refused) throw refused;
    if (
      e.uncompressedSize > 1024 * 1024 &&
      e.uncompressedSize > limits.maxRatio * Math.max(1, e.compressedSize)
    ) {
      throw new FileError(
        'FILE_TOO_LARGE_DECOMPRESSED',
        `The file is too large when decompressed: "${e.name}" expands more than ${limits.maxRatio} times, as a compression bomb does.`,
      );
    }
  }
  if (declared > limits.maxDecompressedBytes) {
    throw new FileError(
      'FILE_TOO_LARGE_DECOMPRESSED',
      `The file is too large when decompressed (${formatBytes(declared)}, more than ${formatBytes(limits.maxDecompressedBytes)}).`,
    );
  }
}

function zipEntryStream(zip: yauzl.ZipFile, info: ZipEntryInfo): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(info.entry, (err, s) => (err || !s ? reject(zipError(err)) : resolve(s))),
  );
}

/**
 * An entry's bytes, counted against the budget and the clock as they come, and checked against
 * the directory's CRC-32 at the end: yauzl checks the size only, and a stored entry has no
 * deflate checksum of its own, so a damaged one would otherwise be read as if whole.
 */
async function* zipEntryChunks(
  zip: yauzl.ZipFile,
  info: ZipEntryInfo,
  budget: InflateBudget,
  deadline: Deadline,
): AsyncGenerator<Buffer> {
  const s = await zipEntryStream(zip, info);
  let inflated = 0;
  let crc = 0;
  try {
    for await (const chunk of s as AsyncIterable<Buffer>) {
      budget.add(chunk.length, (inflated += chunk.length), info.compressedSize);
      deadline.check();
      crc = crc32(chunk, crc);
      yield chunk;
    }
  } catch (error) {
    throw zipError(error);
  } finally {
    s.destroy();
  }
  if (crc !== info.entry.crc32)
    throw new FileError(
      'FILE_DAMAGED',
      `The zip archive is damaged: "${info.name}" does not match its checksum; download it again.`,
    );
}

/**
 * A streaming zip reader (such as unzipper) walks local headers in file order, where
 * yauzl reads the central directory: refuse archives whose entries do not sit back to back from
 * the first byte to the central directory, so nothing can hide from the checks above.
 */
export async function assertContiguous(
  file: string,
  entries: readonly ZipEntryInfo[],
): Promise<void> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const tailLen = Math.min(size, 65557);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    let eocd = -1;
    for (let i = tailLen - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    const cdOffset = eocd >= 0 ? tail.readUInt32LE(eocd + 16) : 0xffffffff;
    const sorted = [...entries].sort(
      (a, b) => a.entry.relativeOffsetOfLocalHeader - b.entry.relativeOffsetOfLocalHeader,
    );
    const header = Buffer.alloc(30);
    const fits = (offset: number, end: number, descriptor: boolean) =>
      offset === end || (descriptor && [12, 16, 20, 24].includes(offset - end));
    let prevEnd = 0;
    let prevDescriptor = false;
    for (const [i, e] of sorted.entries()) {
      const offset = e.entry.relativeOffsetOfLocalHeader;
      if (i === 0 ? offset !== 0 : !fits(offset, prevEnd, prevDescriptor))
        throw new FileError(
          'FILE_DAMAGED',
          'The archive has data between its entries; it is damaged or crafted.',
        );
      await fh.read(header, 0, 30, offset);
      if (header.readUInt32LE(0) !== 0x04034b50)
        throw new FileError(
          'FILE_DAMAGED',
          'The archive is damaged (an entry has no local header).',
        );
      prevEnd = offset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28) + e.compressedSize;
      prevDescriptor = (e.entry.generalPurposeBitFlag & 0x08) !== 0;
    }
    if (cdOffset !== 0xffffffff && sorted.length > 0 && !fits(cdOffset, prevEnd, prevDescriptor)) {
      throw new FileError(
        'FILE_DAMAGED',
        'The archive has data between its entries and its directory; it is damaged or crafted.',
      );
    }
  } finally {
    await fh.close();
  }
}

export interface TarMember {
  name: string;
  path: string;
  size: number;
}

/** The regular files of a (ustar or GNU) tar, copied into workDir. */
export async function extractTar(
  file: string,
  outPrefix: string,
  limits: Limits,
  deadline: Deadline,
): Promise<TarMember[]> {
  const fh = await open(file, 'r');
  const members: TarMember[] = [];
  try {
    const size = (await fh.stat()).size;
    const block = Buffer.alloc(512);
    let offset = 0;
    let longName: string | null = null;
    while (offset + 512 <= size) {
      deadline.check();
      await fh.read(block, 0, 512, offset);
      if (block.every((b) => b === 0)) break;
      const field = (from: number, len: number) => {
        const raw = block.subarray(from, from + len);
        const nul = raw.indexOf(0);
        return raw.subarray(0, nul < 0 ? len : nul).toString('utf8');
      };
      const memberSize = parseInt(field(124, 12).trim() || '0', 8);
      if (!Number.isFinite(memberSize) || memberSize < 0)
        throw new FileError('FILE_DAMAGED', 'The tar archive is damaged (a bad member size).');
      const type = field(156, 1);
      const prefix = field(345, 155);
      const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
      const dataStart = offset + 512;
      if (dataStart + memberSize > size)
        throw new FileError('FILE_DAMAGED', 'The tar archive is cut short; download it again.');
      if (type === 'L') {
        const buf = Buffer.alloc(Math.min(memberSize, 4096));
        await fh.read(buf, 0, buf.length, dataStart);
        longName = buf.toString('utf8').replace(/\0+$/, '');
      } else {
        longName = null;
        if (type === '0' || type === '' || type === '7') {
          if (members.length >= limits.maxEntries)
            throw new FileError(
              'FILE_TOO_LARGE_DECOMPRESSED',
              `The archive holds more than the ${limits.maxEntries} entries accepted.`,
            );
          const out = `${outPrefix}-${members.length}`;
          if (memberSize > 0)
            await pipeline(
              createReadStream(file, { start: dataStart, end: dataStart + memberSize - 1 }),
              createWriteStream(out),
            );
          else await (await open(out, 'w')).close();
          members.push({ name, path: out, size: memberSize });
        }
      }
      offset = dataStart + Math.ceil(memberSize / 512) * 512;
    }
  } finally {
    await fh.close();
  }
  return members;
}
