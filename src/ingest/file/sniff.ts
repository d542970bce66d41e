// What a file is, from its first bytes: the name's extension is only ever a hint.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { FileError } from './limits.ts';

export type Sniffed = 'gzip' | 'zip' | 'tar' | 'ole2' | 'pdf' | 'text';

const startsWith = (head: Buffer, bytes: readonly number[], at = 0) =>
  bytes.every((b, i) => head[at + i] === b);

const BINARY_SIGNATURES: { bytes: number[]; what: string }[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' },
  { bytes: [0x52, 0x61, 0x72, 0x21], what: 'a RAR archive' },
  { bytes: [0x37, 0x7a, 0xbc, 0xaf], what: 'a 7-Zip archive' },
  { bytes: [0x42, 0x5a, 0x68], what: 'a bzip2 archive' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a], what: 'an xz archive' },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: 'a zstd archive' },
  { bytes: [0x7b, 0x5c, 0x72, 0x74, 0x66], what: 'an RTF document' },
];

export const SUPPORTED =
  'Supported formats: CSV, TSV or TXT (any delimiter), XLSX, XLS, PDF with a text layer, and those inside .zip, .gz, .tar or .tar.gz.';

export async function readHead(path: string, bytes: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export function sniffBytes(head: Buffer): Sniffed {
  if (startsWith(head, [0x1f, 0x8b])) return 'gzip';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06]))
    return 'zip';
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole2';
  // a tar's first header names its first member: read as text, that name became the first column's
  if (head.length >= 263 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  // %PDF- may follow a few bytes of junk (a BOM, white space) in files saved by portals
  const lead = head.subarray(0, 1024).toString('latin1');
  if (lead.includes('%PDF-')) return 'pdf';
  for (const sig of BINARY_SIGNATURES) {
    if (startsWith(head, sig.bytes))
      throw new FileError(
        'FILE_UNSUPPORTED_FORMAT',
        `This file is ${sig.what}, not a statement table. ${SUPPORTED}`,
      );
  }
  return 'text';
}

/** Legacy .xls and password-protected .xlsx are both OLE2 compound files: refuses the latter. */
export async function refuseEncryptedOle2(path: string): Promise<void> {
  // the directory names a password-protected OOXML file's streams EncryptionInfo and
  // EncryptedPackage (UTF-16LE); directory sectors may sit anywhere, so the whole file is searched
  const needle = Buffer.from('EncryptedPackage', 'utf16le');
  let carry = Buffer.alloc(0);
  let encrypted = false;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    const buf = Buffer.concat([carry, chunk as Buffer]);
    if (buf.includes(needle)) {
      encrypted = true;
      break;
    }
    carry = buf.subarray(Math.max(0, buf.length - needle.length));
  }
  if (encrypted)
    throw new FileError(
      'FILE_ENCRYPTED',
      'The file is password-protected; remove the password in Excel (or export it again) and upload it again.',
    );
}
