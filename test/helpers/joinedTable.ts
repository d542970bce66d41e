// The statement of the tests of joined tables (sheets of a workbook, files of an archive read as
// one): its header and mapping, and one file through the file reader, the normalizer and the
// statement's flags, with its written rows.
import { DuckDBInstance } from '@duckdb/node-api';
import { statementFlags } from '../../src/ingest/pipeline.ts';
import { normalizeFile } from './normalize.ts';
import { fields } from './sampleMapping.ts';

export { HEADER } from './sampleMapping.ts';

const duck = DuckDBInstance.create(':memory:').then((db) => db.connect());

/** The file read and normalized: its located table, output, flags and written [source_row, title, net] rows. */
export async function readJoined(
  t: { teardown(fn: () => unknown): void },
  bytes: Buffer,
  fileName: string,
) {
  const { located, out, outPath } = await normalizeFile(t, bytes, fields, { fileName });
  const flags = statementFlags(located, out, fields).map(({ kind, message }) => ({
    kind,
    message,
  }));
  const rows = (
    await (
      await duck
    ).runAndReadAll(
      `SELECT source_row, raw_title, royalty_earnings::VARCHAR FROM read_parquet('${outPath}') ORDER BY source_row`,
    )
  ).getRows();
  return { located, out, flags, rows: rows.map(([r, title, net]) => [Number(r), title, net]) };
}
