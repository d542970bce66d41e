// Every container the statement file reader opens, in every form it comes in: zip entries stored
// (`zip -0`) or deflated, with data descriptors, in ZIP64, nested, encrypted, compressed with a
// method not read, cut short or damaged; gzip whole, multi-member, cut short or with trailing
// bytes; tar bare and gzipped. Each is read to its exact table or refused with its errorCode, and
// none may hang (a stored entry's read stream never ended with yauzl 3.2, at 0 % CPU: each read
// here has seconds, not minutes).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import t, { type Test } from 'tap';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { locateTable } from '../../workers/statementFile.ts';
import { repoRoot } from '../setup/paths.ts';

const HOSTILE = path.join(repoRoot, 'fixtures', 'hostile');
const CSV = Buffer.from(
  'ISRC,Title,Amount,Currency\nUSAT20000001,Paper Boats,1.50,USD\nUSAT20000002,Night Song,2.25,EUR\n',
);
const HEADER = ['ISRC', 'Title', 'Amount', 'Currency'];
const ROWS = [
  ['USAT20000001', 'Paper Boats', '1.50', 'USD'],
  ['USAT20000002', 'Night Song', '2.25', 'EUR'],
];

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'containers-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

/** Locates a file given as bytes; a read that takes 20 s is a hang. */
async function locateBytes(name: string, bytes: Buffer) {
  const dir = await mkdtemp(path.join(root, 'w-'));
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no answer in 20 s (a hang)`)), 20_000);
  });
  try {
    return await Promise.race([
      locateTable({ sourcePath: file, fileName: name, workDir: dir }),
      hang,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

interface Member {
  name: string;
  data: Buffer;
  /** stored (method 0) rather than deflated */
  store?: boolean;
  /** written from a stream: sizes and CRC-32 in a data descriptor after the data (flag bit 3) */
  descriptor?: boolean;
  zip64?: boolean;
}

/** A zip as yazl writes it. */
async function zip(members: readonly Member[]): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const m of members) {
    const options = {
      compress: !m.store,
      forceZip64Format: m.zip64 ?? false,
      mtime: new Date('2024-04-01T00:00:00Z'),
    };
    if (m.descriptor) z.addReadStream(Readable.from([m.data]), m.name, options);
    else z.addBuffer(m.data, m.name, options);
  }
  z.end();
  const parts: Buffer[] = [];
  for await (const chunk of z.outputStream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** The offsets of a one-entry zip's local header and central directory header. */
function headers(bytes: Buffer): { local: number; central: number } {
  return {
    local: bytes.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04])),
    central: bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])),
  };
}

/** The zip with its one entry's compression method (and flags) changed in both headers. */
function withMethod(bytes: Buffer, method: number, orFlags = 0): Buffer {
  const out = Buffer.from(bytes);
  const { local, central } = headers(out);
  out.writeUInt16LE(method, local + 8);
  out.writeUInt16LE(method, central + 10);
  out.writeUInt16LE(out.readUInt16LE(local + 6) | orFlags, local + 6);
  out.writeUInt16LE(out.readUInt16LE(central + 8) | orFlags, central + 8);
  return out;
}

/** A ustar archive of the given files. */
function tar(files: readonly { name: string; data: Buffer }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const f of files) {
    const h = Buffer.alloc(512);
    h.write(f.name, 0, 100, 'utf8');
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${f.data.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('14623012000\0', 136);
    h.write('        ', 148);
    h.write('0', 156);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, f.data, Buffer.alloc((512 - (f.data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

async function reads(t: Test, name: string, bytes: Buffer, container: string): Promise<void> {
  const r = await locateBytes(name, bytes);
  if (!r.ok) {
    t.fail(`${name}: ${r.errorCode} ${r.message}`);
    return;
  }
  t.equal(r.container, container, `${name}: container`);
  t.same(r.header, HEADER, `${name}: header`);
  t.same(r.sampleRows, ROWS, `${name}: rows`);
  t.equal(r.dataRecords, 2, `${name}: data records`);
}

async function refuses(
  t: Test,
  name: string,
  bytes: Buffer,
  errorCode: string,
  message?: RegExp,
): Promise<void> {
  const r = await locateBytes(name, bytes);
  t.match(r, { ok: false, errorCode, ...(message ? { message } : {}) }, name);
}

t.test('zip entries stored, deflated, with data descriptors and in ZIP64 are read', async (t) => {
  const csv = (m: Partial<Member>) => zip([{ name: 'statement.csv', data: CSV, ...m }]);
  await reads(t, 'stored.zip', await csv({ store: true }), 'zip');
  await reads(t, 'deflated.zip', await csv({}), 'zip');
  await reads(t, 'stored-descriptor.zip', await csv({ store: true, descriptor: true }), 'zip');
  await reads(t, 'deflated-descriptor.zip', await csv({ descriptor: true }), 'zip');
  await reads(t, 'zip64-stored.zip', await csv({ store: true, zip64: true }), 'zip');
  await reads(
    t,
    'zip64-deflated-descriptor.zip',
    await csv({ zip64: true, descriptor: true }),
    'zip',
  );
  const stored = await csv({ store: true });
  t.equal(
    stored.readUInt16LE(headers(stored).local + 8),
    0,
    'the stored entry is method 0, as zip -0 writes it',
  );
  const descriptor = await csv({ store: true, descriptor: true });
  t.equal(
    descriptor.readUInt16LE(headers(descriptor).local + 6) & 0x08,
    0x08,
    'the streamed entry has a data descriptor',
  );
});

t.test('a zip inside a zip is read; a third level is refused', async (t) => {
  const inner = await zip([{ name: 'statement.csv', data: CSV, store: true }]);
  const nested = await zip([{ name: 'inner.zip', data: inner, store: true }]);
  const r = await locateBytes('nested.zip', nested);
  t.match(r, {
    ok: true,
    container: 'zip',
    header: HEADER,
    sampleRows: ROWS,
    archiveEntry: { name: 'inner.zip' },
  });
  await reads(
    t,
    'nested-deflated.zip',
    await zip([{ name: 'inner.zip', data: await zip([{ name: 'statement.csv', data: CSV }]) }]),
    'zip',
  );
  const csvGzInZip = await zip([{ name: 'statement.csv.gz', data: gzipSync(CSV), store: true }]);
  await reads(t, 'gz-in-zip.zip', csvGzInZip, 'zip');
  await refuses(
    t,
    'deep.zip',
    await zip([{ name: 'nested.zip', data: nested, store: true }]),
    'FILE_ARCHIVE_TOO_DEEP',
    /archives inside archives inside archives/,
  );
  await refuses(t, 'deep.zip.gz', gzipSync(nested), 'FILE_ARCHIVE_TOO_DEEP');
});

t.test(
  'encrypted entries and compression methods not read are refused before anything is inflated',
  async (t) => {
    // made with Info-ZIP: zip -P secret encrypted.zip statement.csv (ZipCrypto, deflated)
    await refuses(
      t,
      'encrypted.zip',
      await import('node:fs/promises').then((fs) =>
        fs.readFile(path.join(HOSTILE, 'encrypted.zip')),
      ),
      'FILE_ENCRYPTED',
    );
    const deflated = await zip([{ name: 'statement.csv', data: CSV }]);
    // WinZip AES: method 99 with the encrypted flag
    await refuses(t, 'aes.zip', withMethod(deflated, 99, 0x01), 'FILE_ENCRYPTED');
    await refuses(
      t,
      'deflate64.zip',
      withMethod(deflated, 9),
      'FILE_UNSUPPORTED_COMPRESSION',
      /"statement\.csv" is compressed with Deflate64/,
    );
    await refuses(
      t,
      'bzip2.zip',
      withMethod(deflated, 12),
      'FILE_UNSUPPORTED_COMPRESSION',
      /bzip2/,
    );
    await refuses(t, 'lzma.zip', withMethod(deflated, 14), 'FILE_UNSUPPORTED_COMPRESSION', /LZMA/);
    await refuses(
      t,
      'zstd.zip',
      withMethod(deflated, 93),
      'FILE_UNSUPPORTED_COMPRESSION',
      /Zstandard/,
    );
    await refuses(
      t,
      'method-77.zip',
      withMethod(deflated, 77),
      'FILE_UNSUPPORTED_COMPRESSION',
      /method 77/,
    );
    // an xlsx saved with a method not read is refused the same way
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Sales').addRows([HEADER, ...ROWS]);
    const xlsx = Buffer.from(await wb.xlsx.writeBuffer());
    const patched = Buffer.from(xlsx);
    for (let i = patched.indexOf('PK\x03\x04'); i >= 0; i = patched.indexOf('PK\x03\x04', i + 4))
      if (patched.readUInt16LE(i + 8) === 8) patched.writeUInt16LE(9, i + 8);
    for (let i = patched.indexOf('PK\x01\x02'); i >= 0; i = patched.indexOf('PK\x01\x02', i + 4))
      if (patched.readUInt16LE(i + 10) === 8) patched.writeUInt16LE(9, i + 10);
    await refuses(t, 'deflate64.xlsx', patched, 'FILE_UNSUPPORTED_COMPRESSION');
  },
);

t.test('a zip cut short, damaged or split is refused', async (t) => {
  const stored = await zip([{ name: 'statement.csv', data: CSV, store: true }]);
  await refuses(t, 'cut-in-data.zip', stored.subarray(0, 60), 'FILE_DAMAGED');
  await refuses(t, 'cut-in-directory.zip', stored.subarray(0, stored.length - 30), 'FILE_DAMAGED');
  // the directory intact, the entry's data short of its declared size
  const { central } = headers(stored);
  const short = Buffer.concat([stored.subarray(0, central - 20), stored.subarray(central)]);
  short.writeUInt32LE(short.readUInt32LE(short.length - 6) - 20, short.length - 6);
  await refuses(t, 'short-data.zip', short, 'FILE_DAMAGED');
  // one byte of a stored entry changed: only its CRC-32 tells (there is no deflate checksum)
  const flipped = Buffer.from(stored);
  const at = flipped.indexOf('Paper Boats,1.50');
  flipped[at + 12] = '7'.charCodeAt(0);
  await refuses(t, 'flipped-stored.zip', flipped, 'FILE_DAMAGED', /does not match its checksum/);
  const deflated = await zip([{ name: 'statement.csv', data: CSV }]);
  const garbled = Buffer.from(deflated);
  const inData = headers(garbled).local + 30 + 'statement.csv'.length + 3;
  garbled[inData] = garbled[inData]! ^ 0xff;
  await refuses(t, 'garbled-deflate.zip', garbled, 'FILE_DAMAGED');
  // a multi-volume archive's last part: the directory says it is disk 1 of several
  const split = Buffer.from(stored);
  split.writeUInt16LE(1, split.length - 22 + 4);
  split.writeUInt16LE(1, split.length - 22 + 6);
  await refuses(t, 'split.zip', split, 'FILE_UNSUPPORTED_FORMAT', /split into several parts/);
  await refuses(
    t,
    'empty.zip',
    Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]),
    'FILE_NO_DATA',
  );
});

t.test('a workbook stored uncompressed, with data descriptors, is read', async (t) => {
  const wb = new ExcelJS.Workbook();
  wb.addWorksheet('Sales').addRows([HEADER, ...ROWS]);
  const parts: { name: string; data: Buffer }[] = [];
  const original = Buffer.from(await wb.xlsx.writeBuffer());
  const z = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(original, { lazyEntries: true }, (e, f) => (e || !f ? reject(e) : resolve(f))),
  );
  await new Promise<void>((resolve, reject) => {
    z.on('entry', (entry: yauzl.Entry) =>
      z.openReadStream(entry, async (e, s) => {
        if (e || !s) return reject(e);
        const chunks: Buffer[] = [];
        for await (const c of s) chunks.push(c as Buffer);
        if (!entry.fileName.endsWith('/'))
          parts.push({ name: entry.fileName, data: Buffer.concat(chunks) });
        z.readEntry();
      }),
    );
    z.on('end', resolve);
    z.readEntry();
  });
  for (const descriptor of [false, true]) {
    const r = await locateBytes(
      'stored.xlsx',
      await zip(parts.map((p) => ({ ...p, store: true, descriptor }))),
    );
    t.match(
      r,
      { ok: true, format: 'xlsx', header: HEADER, sampleRows: ROWS },
      `stored xlsx${descriptor ? ' with data descriptors' : ''}`,
    );
  }
});

t.test('gzip: whole, several members, cut short, trailing bytes', async (t) => {
  await reads(t, 'statement.csv.gz', gzipSync(CSV), 'gzip');
  const [head, ...rest] = CSV.toString().split('\n');
  await reads(
    t,
    'members.csv.gz',
    Buffer.concat([gzipSync(`${head}\n${rest[0]}\n`), gzipSync(rest.slice(1).join('\n'))]),
    'gzip',
  );
  const gz = gzipSync(CSV);
  await refuses(
    t,
    'cut.csv.gz',
    gz.subarray(0, gz.length - 12),
    'FILE_DAMAGED',
    /gzip file is damaged or incomplete/,
  );
  await refuses(
    t,
    'trailing.csv.gz',
    Buffer.concat([gz, Buffer.from('garbage after the member\n')]),
    'FILE_DAMAGED',
  );
  const badCrc = Buffer.from(gz);
  badCrc.writeUInt32LE(badCrc.readUInt32LE(badCrc.length - 8) ^ 1, badCrc.length - 8);
  await refuses(t, 'bad-crc.csv.gz', badCrc, 'FILE_DAMAGED');
});

t.test('tar: bare and gzipped are read; cut short is refused', async (t) => {
  const archive = tar([{ name: 'statement.csv', data: CSV }]);
  // a bare tar was read as text: its first header's name and mode became the first column's name
  await reads(t, 'statements.tar', archive, 'tar');
  await reads(t, 'statements.tar.gz', gzipSync(archive), 'gzip');
  await refuses(t, 'cut.tar', archive.subarray(0, 600), 'FILE_DAMAGED', /cut short/);
  await reads(
    t,
    'tar-in-zip.zip',
    await zip([{ name: 'statements.tar', data: archive, store: true }]),
    'zip',
  );
});

t.test(
  'a legacy .xls (an OLE2 compound file) is read whole and refused cut short or garbled',
  async (t) => {
    const { default: XLSX } = await import('@e965/xlsx');
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([HEADER, ...ROWS]), 'Sales');
    const xls = XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer;
    t.match(await locateBytes('statement.xls', xls), {
      ok: true,
      format: 'xls',
      header: HEADER,
      sampleRows: ROWS,
    });
    await refuses(t, 'cut.xls', xls.subarray(0, Math.floor(xls.length / 2)), 'FILE_DAMAGED');
    await refuses(t, 'cut-in-header.xls', xls.subarray(0, 600), 'FILE_DAMAGED');
    const garbled = Buffer.from(xls);
    garbled.fill(0x41, 512, 2048);
    await refuses(t, 'garbled.xls', garbled, 'FILE_DAMAGED');
  },
);
