// Writing one part of an export to a file: DuckDB itself (`COPY ... TO`) for CSV and Parquet, the
// XLSX writer fed chunk by chunk otherwise; text a spreadsheet would take for a formula is
// neutralised in CSV and XLSX.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, sqlLiteral } from '../db/sql.ts';
import type { ExportColumn, ExportFormat } from './definitions.ts';
import type { ExportFileInsert, ExportRow } from './store.ts';
import { writeXlsx } from './xlsx.ts';

/** One part to write: a SELECT whose columns are the type's columns, by name, and its row count. */
export interface PartSource {
  sql: string;
  params: string[];
  rows: number;
}

export const contentTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  parquet: 'application/vnd.apache.parquet',
};

/** A part written and uploaded: exactly what its export_files row records. */
export type WrittenFile = ExportFileInsert;

/**
 * Text that a spreadsheet would read as a formula (=, +, -, @, tab, carriage return first, also
 * behind control characters and U+FFFE/U+FFFF, which the XLSX writer drops as XML cannot hold
 * them) gets a leading apostrophe, the usual neutralisation; number and date columns are left as
 * they are.
 */
export function neutralizedSql(expr: string): string {
  const lead = `left(${expr}, 1) IN ('=', '+', '-', '@', chr(9), chr(13))`;
  const behindControls = `((ascii(${expr}) < 32 OR ascii(${expr}) >= 65534) AND regexp_matches(${expr}, '^[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x{FFFE}\\x{FFFF}]*[=+\\-@\\t\\r]'))`;
  return `CASE WHEN ${lead} OR ${behindControls} THEN '''' || ${expr} ELSE ${expr} END`;
}

async function* chunksOf(
  c: DuckDBConnection,
  sql: string,
  params: string[],
): AsyncIterable<(string | null)[][]> {
  const result = await c.stream(sql, params);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    yield chunk.getRows() as (string | null)[][];
  }
}

/** Writes one part to `file`; answers the number of rows written. */
export async function writePart(
  c: DuckDBConnection,
  format: ExportFormat,
  sheet: string,
  columns: ExportColumn[],
  part: PartSource,
  file: string,
): Promise<number> {
  const ref = (col: ExportColumn) => `q.${quoteIdent(col.name)}`;
  if (format === 'parquet') {
    const res = await c.runAndReadAll(
      `COPY (${part.sql}) TO ${sqlLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`,
      part.params,
    );
    return Number(res.getRows()[0]?.[0] ?? 0);
  }
  if (format === 'csv') {
    const projection = columns.map(
      (col) =>
        `${col.kind === 'text' ? neutralizedSql(ref(col)) : ref(col)} AS ${quoteIdent(col.name)}`,
    );
    const res = await c.runAndReadAll(
      `COPY (SELECT ${projection.join(', ')} FROM (${part.sql}) q) TO ${sqlLiteral(file)} (FORMAT csv, HEADER true)`,
      part.params,
    );
    return Number(res.getRows()[0]?.[0] ?? 0);
  }
  const projection = columns.map((col) =>
    col.kind === 'text' ? neutralizedSql(ref(col)) : `CAST(${ref(col)} AS VARCHAR)`,
  );
  let written = 0;
  async function* counted(): AsyncIterable<(string | null)[][]> {
    for await (const rows of chunksOf(
      c,
      `SELECT ${projection.join(', ')} FROM (${part.sql}) q`,
      part.params,
    )) {
      written += rows.length;
      yield rows;
    }
  }
  await writeXlsx(file, sheet, columns, counted());
  return written;
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export function partFileName(e: Pick<ExportRow, 'id' | 'type' | 'format'>, part: number): string {
  return `${e.type}-${e.id.slice(0, 8)}-part-${String(part).padStart(4, '0')}.${e.format}`;
}
