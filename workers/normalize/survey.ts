// The first stages of a normalizer run. survey: one parallel pass over the file counts its
// records, the rows that are not data and the cells beyond the header, and gathers the distinct
// values of the per-value fields. split: a large statement is cut into two parts, each read by
// its own reader and connection. keptOf is the SQL of a part's data rows, numbered source_row.
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { distinctAggregates, jsonOf, reader, rowsOf, type Plan } from './plan.ts';
import { allOf } from './sql.ts';

export interface Survey {
  /** the records below the header, footer and rows that are not data included (NormalizeOutput.dataRows) */
  total: number;
  headerRows: number;
  blankRows: number;
  /** the rows that are not data: repeated headers and blank rows */
  drops: number;
  /** the footer: the last records that are not otherwise dropped, as the file reader counted them */
  footer: number;
  /** rows with a cell beyond the header's last column */
  extraCells: number;
  /** distinctAggregates over every data row, the footer's included (see tallies in lookups.ts) */
  aggregates: unknown[];
  /** the records of the second part's copy (0 when not split) */
  secondRows: number;
}

/**
 * A stretch of the file's records read by one reader: from record `skip` (DuckDB's skip) of `file`, `rows`
 * rows of which `drops` are not data (repeated headers, blank rows). `rowsBefore` and `keptBefore`
 * count the rows and the data rows of the parts before it; `take` is how many data rows it gives.
 */
export interface Part {
  file: string;
  skip: number;
  rows: number;
  drops: number;
  rowsBefore: number;
  keptBefore: number;
  take: number;
}

/** The parts written (one, or two read at once), and the whole statement as one part. */
export interface Split {
  whole: Part;
  parts: Part[];
  /** Survey.drops: whether the readers must test each row for being data */
  drops: number;
}

/**
 * One parallel pass over the file: its rows, the rows that are not data, the distinct values.
 * First reading only the cells those need: when every row is surely data, that is all; else again
 * with every cell, to tell the rows that are not data.
 */
export async function survey(plan: Plan): Promise<Survey> {
  const { rows, textColumns } = plan;
  const quickSurvey = `SELECT count(*), 0, 0, ${rows.extraCell}, ${distinctAggregates(plan, 'sure AND')}, count(*) FILTER (WHERE NOT sure) FROM (
      SELECT ${rows.surelyData} AS sure, cx, ${textColumns} FROM ${reader(plan, plan.firstRecord)})`;
  const fullSurvey = `SELECT count(*), count(*) FILTER (WHERE header_row), count(*) FILTER (WHERE blank_row AND NOT header_row), ${rows.extraCell},
      ${distinctAggregates(plan, 'NOT (header_row OR blank_row) AND')} FROM (
      SELECT ${rows.headerRow} AS header_row, ${rows.blankRow} AS blank_row, cx, ${textColumns} FROM ${reader(plan, plan.firstRecord)})`;
  const pass = async (): Promise<unknown[]> => {
    const quick = (await jsonOf(plan, quickSurvey))[0]!;
    return Number(quick.pop()) === 0 ? quick : (await jsonOf(plan, fullSurvey))[0]!;
  };
  // a large statement is read by two readers at once: the first from the start, stopped by a
  // LIMIT, the second from a copy of the file from the record the file reader chose in the file's
  // second half (DuckDB's skip holds the lines it skips in memory), when the second part holds the
  // whole footer. The copy is made, and its rows counted (counting reads no cells), while the survey runs.
  const [surveyed, secondRows] = (await allOf<unknown>([
    pass(),
    plan.splitting
      ? pipeline(
          createReadStream(plan.input.csvPath, {
            start: plan.input.splitOffset,
            highWaterMark: 1 << 20,
          }),
          createWriteStream(plan.secondFile),
        ).then(async () =>
          Number(
            (
              await rowsOf(
                plan,
                `SELECT count(*) FROM ${reader(plan, 0, plan.secondFile)}`,
                plan.connections[1],
              )
            )[0]![0],
          ),
        )
      : Promise.resolve(0),
  ])) as [unknown[], number];
  const total = Number(surveyed[0]);
  const headerRows = Number(surveyed[1]);
  const blankRows = Number(surveyed[2]);
  const drops = headerRows + blankRows;
  return {
    total,
    headerRows,
    blankRows,
    drops,
    footer: Math.min(Math.max(0, Math.floor(plan.input.footerRecords)), total - drops),
    extraCells: Number(surveyed[3]),
    aggregates: surveyed.slice(4),
    secondRows,
  };
}

/** The parts of the statement: two when the survey copied a second part that holds the whole footer, else the whole. */
export async function split(plan: Plan, surveyed: Survey): Promise<Split> {
  const { total, drops, footer } = surveyed;
  const whole: Part = {
    file: plan.input.csvPath,
    skip: plan.firstRecord,
    rows: total,
    drops,
    rowsBefore: 0,
    keptBefore: 0,
    take: total - drops - footer,
  };
  if (!plan.splitting) return { whole, parts: [whole], drops };
  const rows2 = surveyed.secondRows;
  const drops2 =
    drops > 0
      ? Number(
          (
            await rowsOf(
              plan,
              `SELECT count(*) FILTER (WHERE ${plan.rows.notData}) FROM ${reader(plan, 0, plan.secondFile)}`,
            )
          )[0]![0],
        )
      : 0;
  const rows1 = total - rows2;
  const drops1 = drops - drops2;
  if (!(rows2 > 0 && rows1 > 0 && drops1 >= 0 && rows2 - drops2 >= footer))
    return { whole, parts: [whole], drops };
  const parts = [
    {
      file: plan.input.csvPath,
      skip: plan.firstRecord,
      rows: rows1,
      drops: drops1,
      rowsBefore: 0,
      keptBefore: 0,
      take: rows1 - drops1,
    },
    {
      file: plan.secondFile,
      skip: 0,
      rows: rows2,
      drops: drops2,
      rowsBefore: rows1,
      keptBefore: rows1 - drops1,
      take: rows2 - drops2 - footer,
    },
  ];
  return { whole, parts, drops };
}

/**
 * The data rows of a part in file order, numbered 1.. across parts without the dropped rows: that
 * is source_row. row_number() over a single reader's rows keeps their order; LIMIT stops the first
 * part's reader at the second part and the last one's before the footer. `window` (a preview's
 * range of data rows; the input's when not given) keeps only those.
 */
export function keptOf(
  plan: Plan,
  drops: number,
  part: Part,
  columns: string,
  window = plan.input.range,
): string {
  const take = window
    ? Math.max(0, Math.min(part.take, Math.floor(window.end) - 1 - part.keptBefore))
    : part.take;
  const where = window ? `WHERE source_row >= ${Math.floor(window.start)}` : '';
  return `(SELECT * FROM (SELECT k + ${part.keptBefore} AS source_row, ${columns} FROM (
      SELECT row_number() OVER () AS k, * FROM ${reader(plan, part.skip, part.file)} ${drops > 0 ? `WHERE NOT ${plan.rows.notData}` : ''} LIMIT ${take})) ${where})`;
}
