// Export test helpers: waiting for an export, downloading its files through the presigned URLs
// exactly as a client does, and reading CSV, XLSX and Parquet back.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'csv-parse/sync';
import yauzl from 'yauzl';
import { canonicalDecimal } from '../../helpers/decimal.ts';
import type { LooseClient } from '../../helpers/trpc.ts';

export type Table = {
  columns: string[];
  rows: (string | null)[][];
  kinds?: ('n' | 's' | null)[][];
};

export async function waitForExport(
  client: LooseClient,
  organizationId: string,
  exportId: string,
  ms = 60_000,
): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await client.query('export.status', { organizationId, exportId });
    if (!res.ok) throw new Error(`export.status: ${JSON.stringify(res.error)}`);
    if (res.data.status === 'completed' || res.data.status === 'failed') return res.data;
    if (Date.now() > deadline)
      throw new Error(`export ${exportId} still ${res.data.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function runExport(
  client: LooseClient,
  organizationId: string,
  input: Record<string, unknown>,
): Promise<any> {
  const res = await client.mutate('export.trigger', { organizationId, ...input });
  if (!res.ok) throw new Error(`export.trigger: ${JSON.stringify(res.error)}`);
  return waitForExport(client, organizationId, res.data.exportId);
}

export interface Downloaded {
  file: any;
  bytes: Buffer;
  disposition: string | null;
  contentType: string | null;
}

/** Every file of a completed export, fetched through export.downloadFile's presigned URL. */
export async function downloadAll(
  client: LooseClient,
  organizationId: string,
  exportId: string,
): Promise<Downloaded[]> {
  const files = await client.query('export.listFiles', { organizationId, exportId });
  if (!files.ok) throw new Error(`export.listFiles: ${JSON.stringify(files.error)}`);
  const out: Downloaded[] = [];
  for (const file of files.data.files) {
    const link = await client.mutate('export.downloadFile', {
      organizationId,
      exportId,
      fileId: file.id,
    });
    if (!link.ok) throw new Error(`export.downloadFile: ${JSON.stringify(link.error)}`);
    const res = await fetch(link.data.url);
    if (res.status !== 200) throw new Error(`GET ${res.status}`);
    out.push({
      file,
      bytes: Buffer.from(await res.arrayBuffer()),
      disposition: res.headers.get('content-disposition'),
      contentType: res.headers.get('content-type'),
    });
  }
  return out;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function readCsv(bytes: Buffer): Table {
  const records = parse(bytes, { relax_column_count: false }) as string[][];
  const [columns, ...rows] = records;
  return { columns: columns!, rows: rows.map((r) => r.map((v) => (v === '' ? null : v))) };
}

function unzipEntry(bytes: Buffer, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('not a zip'));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName !== name) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          stream.on('error', reject);
        });
      });
      zip.on('end', () => reject(new Error(`${name} not in the archive`)));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#13;/g, '\r')
    .replace(/&amp;/g, '&');

/** The sheet's cells as written: exact text, and whether each is a number or a string cell. */
export async function readXlsx(bytes: Buffer): Promise<Table> {
  const xml = await unzipEntry(bytes, 'xl/worksheets/sheet1.xml');
  const rows: (string | null)[][] = [];
  const kinds: ('n' | 's' | null)[][] = [];
  for (const row of xml.matchAll(/<row r="\d+">(.*?)<\/row>/gs)) {
    const cells: (string | null)[] = [];
    const k: ('n' | 's' | null)[] = [];
    for (const c of row[1]!.matchAll(
      /<c r="[A-Z]+\d+"\/>|<c r="[A-Z]+\d+"><v>(.*?)<\/v><\/c>|<c r="[A-Z]+\d+" t="inlineStr"><is><t xml:space="preserve">(.*?)<\/t><\/is><\/c>/gs,
    )) {
      if (c[1] !== undefined) {
        cells.push(c[1]);
        k.push('n');
      } else if (c[2] !== undefined) {
        cells.push(unescapeXml(c[2]));
        k.push('s');
      } else {
        cells.push(null);
        k.push(null);
      }
    }
    rows.push(cells);
    kinds.push(k);
  }
  const [columns, ...data] = rows;
  return { columns: columns as string[], rows: data, kinds: kinds.slice(1) };
}

/** Parquet through DuckDB: values as text, and the column types. */
export async function readParquet(
  bytes: Buffer,
): Promise<Table & { types: Record<string, string> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'export-test-'));
  const file = path.join(dir, 'part.parquet');
  await writeFile(file, bytes);
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    const described = (
      await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)
    ).getRows();
    const columns = described.map((r) => String(r[0]));
    const types = Object.fromEntries(described.map((r) => [String(r[0]), String(r[1])]));
    const reader = await c.runAndReadAll(
      `SELECT ${columns.map((n) => `CAST("${n}" AS VARCHAR)`).join(', ')} FROM read_parquet('${file}')`,
    );
    return {
      columns,
      types,
      rows: reader.getRows().map((r) => r.map((v) => (v === null ? null : String(v)))),
    };
  } finally {
    c.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function readTable(format: string, bytes: Buffer): Promise<Table> {
  if (format === 'csv') return readCsv(bytes);
  if (format === 'xlsx') return readXlsx(bytes);
  return readParquet(bytes);
}

/** The rows of all parts as objects keyed by column. */
export function records(tables: Table[]): Record<string, string | null>[] {
  return tables.flatMap((t) =>
    t.rows.map((r) => Object.fromEntries(t.columns.map((c, i) => [c, r[i] ?? null]))),
  );
}

/** Exact sum of decimal texts (nulls skipped), canonical: no trailing zeros. null when all are null. */
export function sumDecimals(values: (string | null | undefined)[]): string | null {
  const SCALE = 30;
  let total = 0n;
  let any = false;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    any = true;
    const neg = v.startsWith('-');
    const [i, f = ''] = v.replace(/^[-+]/, '').split('.');
    const n = BigInt(i! + f.padEnd(SCALE, '0').slice(0, SCALE));
    if (f.length > SCALE) throw new Error(`too many decimals: ${v}`);
    total += neg ? -n : n;
  }
  if (!any) return null;
  const neg = total < 0n;
  const s = (neg ? -total : total).toString().padStart(SCALE + 1, '0');
  return canonicalDecimal(`${neg ? '-' : ''}${s.slice(0, -SCALE)}.${s.slice(-SCALE)}`);
}
