// Normalizes a located statement table into standard rows with DuckDB, in a worker thread: the
// `normalize` task of src/workers/tasks.ts.
// DuckDB reads the delimited text itself (no row-by-row JavaScript) and computes the per-row
// expressions; the low-cardinality readers (periods, dates, countries, currencies, identifiers)
// run in JavaScript once per DISTINCT raw value and are looked up by ENUM code. Money is DECIMAL end to end.
// Nothing is held: a survey pass over the file, then its data rows streamed to Parquet, a large
// file by two readers at once whose parts are joined (parquetConcat.ts).
//
// A run is stages over one plan (normalize/plan.ts: the SQL known from the input alone):
// survey → split (normalize/survey.ts) → lookups (normalize/lookups.ts) → projection → write
// (normalize/write.ts) → figures (normalize/figures.ts). normalizeStatement runs it again when
// the file needs another reading or a column another decimal rule, and answers its errors.
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { connect, disconnect, stopping, withThreadInstance, type CatalogUse } from './duckdb.ts';
import { headerIn } from '../src/ingest/standardFields.ts';
import { stopwatch } from '../src/ingest/stopwatch.ts';
import type { NormalizeInput, NormalizeOutput } from '../src/ingest/normalizeTypes.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';
import { AMOUNT_MACRO } from './normalize/amountMacro.ts';
import {
  AmountFormatError,
  BudgetSpent,
  DateOrderError,
  FormatSwitch,
  FormulaError,
  MappingError,
} from './normalize/errors.ts';
import { figures, previewRows } from './normalize/figures.ts';
import { gatherValues, judgeFormats, lookups } from './normalize/lookups.ts';
import { planRun, SMALL_FILE_BYTES, type Reading } from './normalize/plan.ts';
import { split, survey } from './normalize/survey.ts';
import { projection, writeRemoved, writeRows, writeVariants } from './normalize/write.ts';

export {
  normalizedColumns,
  type CurrencyTotals,
  type NormalizeInput,
  type NormalizeOutput,
} from '../src/ingest/normalizeTypes.ts';

function emptyOutput(): NormalizeOutput {
  return {
    dataRows: 0,
    keptRows: 0,
    dropped: [],
    net: null,
    gross: null,
    units: null,
    perCurrency: [],
    stmt: null,
    stmtPeriods: 0,
    salesPeriodStart: null,
    salesPeriodEnd: null,
    rawValues: [],
    payors: [],
    issues: {
      invalidAmounts: 0,
      missingAmounts: 0,
      invalidIsrc: 0,
      invalidUpc: 0,
      unknownCountries: [],
      unknownCurrencies: [],
      missingStmtPeriod: 0,
      extraCells: 0,
    },
  };
}

/**
 * Runs `work` within `ms`. Once the budget is spent its queries are interrupted, and again every
 * 50 ms, since an interrupt reaches only the query running at that moment (a small statement's
 * next query would run on); work that still ends after that is refused all the same, so a run
 * past its budget fails whatever it was doing then.
 */
async function withTimeBudget<T>(
  connections: DuckDBConnection[],
  ms: number | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!ms) return work();
  let spent = false;
  let repeat: NodeJS.Timeout | undefined;
  // interrupt, never abort the thread: aborting a worker inside DuckDB kills the process (pitfalls.md)
  const interrupt = () => {
    spent = true;
    for (const c of connections) c.interrupt();
    repeat = setTimeout(interrupt, 50);
  };
  const timer = setTimeout(interrupt, ms);
  try {
    const result = await work();
    if (spent) throw new BudgetSpent();
    return result;
  } finally {
    clearTimeout(timer);
    clearTimeout(repeat);
  }
}

const memoryLimitMb = (input: NormalizeInput) => input.memoryLimitMb ?? 1024;

/**
 * The optimizers a small file's queries go without: planning them was a third of a small
 * statement's planning (the survey's and the projection's, tens of cells each, macros expanded),
 * for rows that take a millisecond to compute however planned. Each rewrites a plan into one of
 * the same results (docs/decisions/small-files-one-thread.md).
 */
const SMALL_FILE_SKIPPED_OPTIMIZERS = ['expression_rewriter', 'common_subexpressions'];

// the macros live in the thread's instance, made once (value types and lookup lists are a run's,
// seen by both of its connections, and dropped after it)
const createMacros = async (c: DuckDBConnection) => {
  await c.run(AMOUNT_MACRO);
};

/**
 * The file's bytes (Infinity when it cannot be read: that is the reader's to report), looked up in
 * this thread rather than in libuv's pool, whose threads run every thread's DuckDB queries: a wait
 * there cost a small statement up to milliseconds on a busy machine.
 */
function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return Infinity;
  }
}

export async function normalizeStatement(
  original: TaskInput<'normalize'>,
): Promise<WorkerResult<TaskOutput<'normalize'>>> {
  const deadline = original.timeBudgetMs ? Date.now() + original.timeBudgetMs : null;
  const reading: Reading = { strict: true, serial: false };
  const fileBytes = sizeOf(original.csvPath);
  // a small file's queries on one thread: a second one only sets up its own share of each query's
  // hash tables (docs/decisions/small-files-one-thread.md)
  const small = fileBytes <= SMALL_FILE_BYTES;
  const threads = small ? 1 : (original.threads ?? 2);
  // the rule each column's numbers are read by: the file reader's, unless every number of a column fits only the other
  let input = original;
  for (;;) {
    const settings = {
      threads,
      memoryLimitMb: memoryLimitMb(input),
      disabledOptimizers: small ? SMALL_FILE_SKIPPED_OPTIMIZERS : [],
    };
    try {
      return await withThreadInstance(settings, createMacros, (instance, catalog) =>
        runOnce(instance, catalog, input, reading, deadline, small),
      );
    } catch (error) {
      // interrupted because the service stops: the work is retried, the statement is not at fault
      if (stopping())
        return fail('SERVICE_UNAVAILABLE', 'normalizing was interrupted: the service is stopping');
      if (error instanceof MappingError) return fail('MAPPING_COLUMN_MISSING', error.message);
      if (error instanceof FormulaError) return fail('MAPPING_FORMULA_INVALID', error.message);
      if (error instanceof DateOrderError) return fail('DATE_ORDER_AMBIGUOUS', error.message);
      if (error instanceof AmountFormatError)
        return fail('AMOUNT_FORMAT_CONFLICT', error.message, error.details);
      if (error instanceof FormatSwitch) {
        const header = headerIn(input.header, error.header) ?? error.header;
        input = { ...input, decimalComma: { ...input.decimalComma, [header]: error.decimalComma } };
        continue;
      }
      const message = (error as Error).message ?? String(error);
      if (/interrupt/i.test(message))
        return fail(
          'INGEST_TIME_BUDGET_EXCEEDED',
          'normalizing the statement took longer than its time budget',
        );
      // a reading the file refuses: again, from the start, with the next one
      if (/CSV Error/i.test(message)) {
        if (!reading.serial && /quoted new ?lines/i.test(message)) {
          reading.serial = true;
          continue;
        }
        if (reading.strict) {
          reading.strict = false;
          continue;
        }
      }
      return fail(
        'STATEMENT_UNREADABLE',
        `the statement could not be read as a table: ${message.split('\n')[0]!.slice(0, 300)}`,
      );
    }
  }
}

/**
 * One run on two connections of the thread's instance, within what is left of the budget: a
 * statement the file reader offers no second reader (splitOffset: every small one) has one
 * connection in both places, opened and closed once.
 */
async function runOnce(
  instance: DuckDBInstance,
  catalog: CatalogUse,
  input: NormalizeInput,
  reading: Reading,
  deadline: number | null,
  small: boolean,
): Promise<WorkerResult<NormalizeOutput>> {
  // two connections: the two parts of a large statement are written at the same time
  const first = await connect(instance);
  const connections = [first, input.splitOffset ? await connect(instance) : first] as const;
  const opened = [...new Set(connections)];
  try {
    const budget = deadline === null ? undefined : Math.max(1, deadline - Date.now());
    return await withTimeBudget(opened, budget, () =>
      run(connections, catalog, input, reading, small),
    );
  } finally {
    for (const c of opened) disconnect(c);
  }
}

/** One run over the file, stage by stage; each stage's time is a lap of NormalizeOutput.timings. */
async function run(
  connections: readonly [DuckDBConnection, DuckDBConnection],
  catalog: CatalogUse,
  input: NormalizeInput,
  reading: Reading,
  small: boolean,
): Promise<WorkerResult<NormalizeOutput>> {
  const { lap, timings } = stopwatch();
  const plan = planRun(connections, input, reading, small);
  const surveyed = await survey(plan);
  lap('read');
  const parts = await split(plan, surveyed);
  if (input.variantsOnly) {
    await writeVariants(plan, parts);
    return { ok: true, ...emptyOutput() };
  }
  const { written, deciding } = await gatherValues(plan, parts, surveyed);
  lap('drops');
  await judgeFormats(plan, parts, deciding);
  const found = await lookups(plan, written, deciding);
  if (found.typesMade) catalog.typesMade();
  if (found.tableMade) catalog.objectsMade();
  lap('lookups');
  const target = await writeRows(plan, parts, projection(plan, parts, found));
  lap('write');
  await writeRemoved(plan, parts, surveyed, catalog);
  if (plan.splitting) await rm(plan.secondFile, { force: true });
  lap('removed');
  const output = await figures(plan, surveyed, found, target);
  lap('figures');
  return {
    ok: true,
    timings,
    ...output,
    ...(input.outPath ? {} : { preview: await previewRows(plan) }),
  };
}
