// The analytics engine of one process: the organizations' databases, the result cache and the
// queries in flight. A query is named by a key over everything that decides its answer (kind,
// organization, the caller's rightsholder scope, the normalized query or SQL text, the data
// version, the model version): the same body always names the same query, so cube.query,
// queryAsync and queryPoll (and their sqlQuery twins) share one run and one cached answer.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBResultReader } from '@duckdb/node-api';
import { AppError, type ErrorCode } from '../errors.ts';
import type { Deps } from '../deps.ts';
import {
  compileQuery,
  rowViewSql,
  sqlTableColumns,
  type OutputColumn,
  type Restrictions,
} from './compile.ts';
import { compareEnvelope, compareQueries, type ComparePayload } from './compare.ts';
import {
  cubeEnvelope,
  echoQuery,
  type Annotation,
  type CubePayload,
  type QueryEcho,
  type Row,
} from './envelope.ts';
import { dimensionAnnotation, measureAnnotation } from './meta.ts';
import {
  hasRightsholderFilter,
  normalizeQuery,
  type NormalizedQuery,
  type QueryInput,
} from './query.ts';
import { SandboxPool } from './sandbox.ts';
import { MODEL_VERSION, VIEW, memberOf } from './semantic.ts';
import { OrgFacts, readFingerprint, type Fingerprint, type FingerprintReading } from './store.ts';
import { shortestDecimal } from '../decimal.ts';
import { sqlLiteral } from '../db/sql.ts';

export interface Caller {
  organizationId: string;
  userId: string;
  /** the data-access scope the caller's authorization read with its role (null: every rightsholder) */
  rightsholderScope: string[] | null;
  /** PostgreSQL's snapshot when the caller's credentials were read, if it was (Principal.snapshot) */
  snapshot?: string;
}

export type { CubePayload };

export interface SqlPayload {
  schema: { name: string; column_type: string }[];
  rows: unknown[][];
}

export type AsyncAnswer<T> = { status: 'processing' } | { status: 'completed'; data: T };

interface CacheEntry {
  value: CubePayload | SqlPayload;
  bytes: number;
}

const IDLE_CLOSE_MS = 10 * 60_000;
const FAILURE_TTL_MS = 60_000;

/** Canonical decimal text: no exponent, no trailing zeros, no "-0" (other text as it is, trimmed). */
export function decimalText(value: string): string {
  const text = value.trim();
  return shortestDecimal(text) ?? text;
}

function cellText(value: unknown, type: OutputColumn['type']): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'number') {
    if (typeof value === 'number' && !Number.isInteger(value)) return String(value);
    return decimalText(String(value));
  }
  return String(value);
}

/**
 * The rows with their keys in Cube's order: each column's own key in the order of the columns
 * (dimensions, granular time dimensions, measures), then the plain key of each granular time
 * dimension (Cube's transform adds those after the database's columns).
 */
function toRows(reader: DuckDBResultReader, columns: OutputColumn[]): Row[] {
  return reader.getRowsJson().map((cells) => {
    const row: Row = {};
    const texts = columns.map((c, i) => cellText(cells[i], c.type));
    columns.forEach((c, i) => (row[c.keys[0]!] = texts[i]!));
    columns.forEach((c, i) => c.keys.slice(1).forEach((key) => (row[key] = texts[i]!)));
    return row;
  });
}

function annotate(columns: OutputColumn[]): Annotation {
  const measures: Record<string, unknown> = {};
  const dimensions: Record<string, unknown> = {};
  const timeDimensions: Record<string, unknown> = {};
  for (const c of columns) {
    const name = memberOf(c.member)!;
    if (c.role === 'measure') measures[c.member] = measureAnnotation(name);
    else if (c.role === 'dimension') dimensions[c.member] = dimensionAnnotation(name);
    else {
      timeDimensions[c.keys[0]!] = dimensionAnnotation(name, c.granularity);
      if (c.keys.length > 1) timeDimensions[c.member] = dimensionAnnotation(name);
    }
  }
  return { measures, dimensions, segments: {}, timeDimensions };
}

function keyOf(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** A JSON value with object keys sorted (arrays keep their order: it matters to the answer). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * DuckDB's overflow of its 38 digits (amounts a statement holds that no exact decimal of the view
 * carries, such as 1e12 US dollars) as ANALYTICS_VALUE_OUT_OF_RANGE; any other error as it is.
 */
function outOfRange(error: unknown): unknown {
  if (!/^Out of Range Error: Overflow/i.test((error as Error)?.message ?? '')) return error;
  return new AppError(
    'ANALYTICS_VALUE_OUT_OF_RANGE',
    'A value of the answer is beyond what analytics computes exactly (US dollar amounts of 1e12 or more); narrow the filters or ask for the original currency',
  );
}

async function readAll(
  c: DuckDBConnection,
  sql: string,
  params: string[],
  timeoutMs: number,
  code: ErrorCode,
): Promise<DuckDBResultReader> {
  // interrupt, never abort: aborting a thread inside DuckDB kills the process (pitfalls.md)
  const timer = setTimeout(() => c.interrupt(), timeoutMs);
  try {
    // without values, one call into DuckDB: with them, node-api extracts, prepares, binds and runs
    return await (params.length > 0 ? c.runAndReadAll(sql, params) : c.runAndReadAll(sql));
  } catch (error) {
    if (/interrupt/i.test((error as Error).message))
      throw new AppError(code, `The query ran longer than ${timeoutMs} ms and was stopped`);
    throw outOfRange(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The memory an answer holds, counted value by value in O(values) (no string is read): 16 bytes
 * a value (its slot and a number or a header), 8 more a key of an object, 24 a string plus one
 * a character (V8 keeps Latin-1 text one byte a character). A string or an array thus counts a
 * little more than its JSON text.
 */
function answerBytes(value: unknown): number {
  if (typeof value === 'string') return 24 + value.length;
  if (value === null || typeof value !== 'object') return 16;
  let bytes = 16;
  if (Array.isArray(value)) {
    for (const v of value) bytes += answerBytes(v);
  } else {
    for (const v of Object.values(value)) bytes += 8 + answerBytes(v);
  }
  return bytes;
}

/** Table functions whose columns are their own: they read neither the table nor the catalog. */
const PLAIN_TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest']);
/** The `type` of the parser's table references (expressions carry a `class` besides). */
const TABLE_REF_TYPES = new Set([
  'BASE_TABLE',
  'JOIN',
  'SUBQUERY',
  'TABLE_FUNCTION',
  'EXPRESSION_LIST',
  'EMPTY',
  'PIVOT',
  'SHOW_REF',
  'COLUMN_DATA',
  'DELIM_GET',
]);

/**
 * The view columns a parsed statement (json_serialize_sql's tree) needs. Pruning is safe only
 * when every column it reads is named, so every column is needed as soon as anything reads
 * columns it does not name or the table's shape: `*` and COLUMNS(...), a whole-row reference, a
 * positional reference (#n), NATURAL JOIN, column aliases on the table (`AS t(a, b)` renames by
 * position), PIVOT/UNPIVOT, DESCRIBE/SUMMARIZE/SHOW, any table but the view and the statement's
 * own CTEs (information_schema.*, duckdb_columns, pg_catalog.*: the catalog), and any table
 * function but range/generate_series/unnest (duckdb_columns(), pragma_table_info(),
 * query_table(), query()). A JOIN ... USING names its columns. Unknown forms load everything.
 */
export function viewColumnsRead(statements: unknown): string[] {
  const columns = new Set(sqlTableColumns.map((c) => c.name));
  const reading: ColumnsReading = {
    tables: new Set(),
    named: new Set(),
    lastParts: new Set(),
    everything: false,
  };
  walkStatement(reading, statements, new Set(), false);
  // a table name or alias as a value is the whole row as a struct: it needs every column
  for (const t of reading.tables) if (reading.lastParts.has(t)) reading.everything = true;
  if (reading.everything) return [...columns];
  const wanted = [...reading.named].filter((n) => columns.has(n));
  // a table needs one column even when the statement names none (count(*), SELECT 1)
  return wanted.length > 0 ? wanted : ['organization_id'];
}

/** What a walk of a parsed statement has found so far. */
interface ColumnsReading {
  /** the tables read and their aliases */
  tables: Set<string>;
  /** every part of every column reference, and the columns of JOIN ... USING */
  named: Set<string>;
  /** the last part of every column reference (a table's name there is its whole row) */
  lastParts: Set<string>;
  /** something reads columns it does not name, or the table's shape */
  everything: boolean;
}

/** A name of the parse tree, lower-cased ('' when absent). */
function lowerName(v: unknown): string {
  return typeof v === 'string' ? v.toLowerCase() : '';
}

/** Notes a table reference: the view (or a CTE) by name, anything else reads everything. */
function noteTableRef(
  reading: ColumnsReading,
  n: Record<string, unknown>,
  ctes: ReadonlySet<string>,
): void {
  switch (n.type) {
    case 'BASE_TABLE': {
      const name = lowerName(n.table_name);
      const schema = lowerName(n.schema_name);
      const catalog = lowerName(n.catalog_name);
      const cte = schema === '' && catalog === '' && ctes.has(name);
      const renamed = Array.isArray(n.column_name_alias) && n.column_name_alias.length > 0;
      const view =
        name === VIEW &&
        (schema === '' || schema === 'main') &&
        (catalog === '' || catalog === 'memory');
      if (!cte && (!view || renamed)) reading.everything = true;
      reading.tables.add(name);
      if (lowerName(n.alias)) reading.tables.add(lowerName(n.alias));
      return;
    }
    case 'JOIN':
      if (n.ref_type === 'NATURAL') reading.everything = true;
      if (Array.isArray(n.using_columns))
        for (const c of n.using_columns) reading.named.add(lowerName(c));
      return;
    case 'TABLE_FUNCTION': {
      const fn = n.function as Record<string, unknown> | null | undefined;
      if (!PLAIN_TABLE_FUNCTIONS.has(lowerName(fn?.function_name)) || lowerName(fn?.schema) !== '')
        reading.everything = true;
      return;
    }
    case 'SUBQUERY':
    case 'EXPRESSION_LIST':
    case 'EMPTY':
      return;
    default:
      reading.everything = true;
  }
}

/**
 * The CTEs a node's own parts see: a CTE's body (walked here) sees the CTEs before it and itself
 * (recursive); the rest of the node all of them.
 */
function cteScope(
  reading: ColumnsReading,
  n: Record<string, unknown>,
  ctes: ReadonlySet<string>,
): ReadonlySet<string> {
  const map = (n.cte_map as { map?: unknown } | undefined)?.map;
  if (!Array.isArray(map) || map.length === 0) return ctes;
  const inner = new Set(ctes);
  for (const entry of map as { key?: unknown; value?: unknown }[]) {
    inner.add(lowerName(entry.key));
    walkStatement(reading, entry.value, new Set(inner), false);
  }
  return inner;
}

/** Walks a node of the parse tree, noting its table and column references, until everything is needed. */
function walkStatement(
  reading: ColumnsReading,
  node: unknown,
  ctes: ReadonlySet<string>,
  isTable: boolean,
): void {
  if (reading.everything) return;
  if (Array.isArray(node)) {
    for (const child of node) walkStatement(reading, child, ctes, isTable);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as Record<string, unknown>;
  const scope = cteScope(reading, n, ctes);
  const tableRef =
    isTable || (!('class' in n) && typeof n.type === 'string' && TABLE_REF_TYPES.has(n.type));
  if (tableRef) noteTableRef(reading, n, scope);
  if (n.class === 'STAR' || n.class === 'POSITIONAL_REFERENCE') reading.everything = true;
  if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names)) {
    const parts = n.column_names.map(lowerName);
    for (const p of parts) reading.named.add(p);
    reading.lastParts.add(parts[parts.length - 1]!);
  }
  for (const [key, child] of Object.entries(n)) {
    if (key === 'cte_map') continue;
    const childIsTable =
      key === 'from_table' ||
      (tableRef && n.type === 'JOIN' && (key === 'left' || key === 'right')) ||
      (tableRef && n.type === 'PIVOT' && key === 'source');
    walkStatement(reading, child, scope, childIsTable);
  }
}

export class AnalyticsEngine {
  private readonly orgs = new Map<string, OrgFacts>();
  private readonly readings = new Map<string, FingerprintReading>();
  private readonly cache = new Map<string, CacheEntry>();
  private cacheBytes = 0;
  private readonly inflight = new Map<string, Promise<CubePayload | SqlPayload>>();
  private readonly failures = new Map<string, { error: unknown; at: number }>();
  /** organizations whose database a query holds open across waits outside it (a sandbox slot) */
  private readonly holds = new Map<string, number>();
  private readonly sandbox: SandboxPool;
  private readonly idleTimer: NodeJS.Timeout;

  constructor(private readonly deps: Deps) {
    const a = deps.config.analytics;
    this.sandbox = new SandboxPool(a.sql, deps.log);
    this.idleTimer = setInterval(() => this.closeIdle(), 60_000).unref();
  }

  private get settings() {
    return this.deps.config.analytics;
  }

  facts(organizationId: string): OrgFacts {
    let facts = this.orgs.get(organizationId);
    if (!facts) {
      facts = new OrgFacts(
        organizationId,
        {
          dir: this.settings.dir,
          threads: this.settings.threads,
          memoryMb: this.settings.memoryMb,
        },
        this.deps.log,
      );
      this.orgs.set(organizationId, facts);
    }
    return facts;
  }

  async restrictions(caller: Caller): Promise<Restrictions> {
    const scope = caller.rightsholderScope;
    return {
      organizationId: caller.organizationId,
      rightsholderIds: scope === null ? null : [...scope].sort(),
    };
  }

  /**
   * The organization's current fingerprint; the last reading lets PostgreSQL skip the scans when
   * nothing committed since. A snapshot the request already read (with the caller's credentials,
   * after the request arrived) that equals the last reading's means the same without asking.
   */
  async fingerprint(organizationId: string, snapshot?: string): Promise<Fingerprint> {
    const reading = await readFingerprint(
      this.deps.pool,
      organizationId,
      this.readings.get(organizationId),
      snapshot,
    );
    this.readings.set(organizationId, reading);
    return reading.fingerprint;
  }

  /**
   * Loads whatever the organization's database lacks; returns it for further reads. `catalog:
   * false`: the catalog table may lag (OrgFacts.ensureFresh), for a reader of the facts alone.
   */
  async freshFacts(
    organizationId: string,
    fp?: Fingerprint,
    want: { catalog?: boolean } = {},
  ): Promise<OrgFacts> {
    const facts = this.facts(organizationId);
    await facts.ensureFresh(
      this.deps.pool,
      this.deps.store,
      fp ?? (await this.fingerprint(organizationId)),
      want,
    );
    return facts;
  }

  // --- cube queries -------------------------------------------------------------------

  /**
   * Names the query and says how to run it. The freshness check (a PostgreSQL round trip) and the
   * query itself overlap: while the fingerprint is read, the query already runs on the data the
   * organization's database holds, and that answer is used when the fingerprint shows the data
   * unchanged; otherwise the database is brought up to date and the query runs again.
   */
  private async prepareCube(caller: Caller, input: QueryInput, usePreagg: boolean) {
    const query = normalizeQuery(input, caller.organizationId, Date.now());
    const echo = echoQuery(input, query);
    if (!hasRightsholderFilter(query.filters)) {
      throw new AppError(
        'RIGHTSHOLDER_FILTER_REQUIRED',
        `Every analytics query filters on ${VIEW}.rightsholder_id (rightsholder_id equals their ids, on every path through the filters)`,
      );
    }
    // the two PostgreSQL reads overlap: the fingerprint does not depend on who asks
    const fingerprint = this.fingerprint(caller.organizationId, caller.snapshot);
    fingerprint.catch(() => {}); // awaited below; a failure of the scope read must not leave it unhandled
    const restrictions = await this.restrictions(caller);
    // the echo too: two bodies of one normalized query (a phrase and its dates) echo differently
    const keyFor = (version: string) =>
      keyOf(
        canonical({
          kind: 'cube',
          model: MODEL_VERSION,
          restrictions,
          query,
          echo,
          data: version,
          usePreagg,
        }),
      );
    const facts = this.facts(caller.organizationId);
    const loaded = facts.loadedVersion;
    let speculative: Promise<CubePayload> | undefined;
    if (
      loaded !== undefined &&
      !this.cache.has(keyFor(loaded)) &&
      !this.inflight.has(keyFor(loaded))
    ) {
      speculative = this.executeCube(facts, query, echo, restrictions, usePreagg);
      // an answer of stale data is dropped, and with it any error it ran into
      speculative.catch(() => {});
    }
    const fp = await fingerprint;
    const key = keyFor(fp.version);
    const run =
      speculative && fp.version === loaded
        ? () => speculative
        : () => this.runCube(query, echo, restrictions, fp, usePreagg);
    return { key, run };
  }

  private async runCube(
    query: NormalizedQuery,
    echo: QueryEcho,
    restrictions: Restrictions,
    fp: Fingerprint,
    usePreagg: boolean,
  ): Promise<CubePayload> {
    return this.executeCube(
      await this.freshFacts(restrictions.organizationId, fp),
      query,
      echo,
      restrictions,
      usePreagg,
    );
  }

  private async executeCube(
    facts: OrgFacts,
    query: NormalizedQuery,
    echo: QueryEcho,
    restrictions: Restrictions,
    usePreagg: boolean,
  ): Promise<CubePayload> {
    const compiled = compileQuery(query, restrictions, { usePreagg, inline: true });
    const timeout = this.settings.queryTimeoutMs;
    const [reader, total] = await Promise.all([
      facts.withConnection((c) =>
        readAll(c, compiled.sql, compiled.params, timeout, 'ANALYTICS_QUERY_TIMEOUT'),
      ),
      compiled.totalSql
        ? facts.withConnection(async (c) =>
            Number(
              (
                await readAll(
                  c,
                  compiled.totalSql!,
                  compiled.totalParams,
                  timeout,
                  'ANALYTICS_QUERY_TIMEOUT',
                )
              ).getRows()[0]![0],
            ),
          )
        : Promise.resolve(undefined),
    ]);
    return cubeEnvelope(echo, annotate(compiled.columns), toRows(reader, compiled.columns), total);
  }

  async cubeQuery(
    caller: Caller,
    input: QueryInput,
    usePreagg: boolean,
  ): Promise<CubePayload | ComparePayload> {
    const compared = compareQueries(input);
    if (compared)
      return compareEnvelope(
        (await Promise.all(
          compared.map((q) => this.cubeQuery(caller, q, usePreagg)),
        )) as CubePayload[],
      );
    const { key, run } = await this.prepareCube(caller, input, usePreagg);
    return (await this.sync(key, run, 'ANALYTICS_QUERY_TIMEOUT')) as CubePayload;
  }

  async cubeQueryAsync(
    caller: Caller,
    input: QueryInput,
    opts: { usePreagg: boolean; noCache: boolean },
  ): Promise<AsyncAnswer<CubePayload | ComparePayload>> {
    const compared = compareQueries(input);
    if (compared) {
      const answers = await Promise.all(compared.map((q) => this.cubeQueryAsync(caller, q, opts)));
      // completed when every range is: a poll re-sends the body, and the ranges answered wait in the cache
      if (!answers.every((a) => a.status === 'completed')) return { status: 'processing' };
      return {
        status: 'completed',
        data: compareEnvelope(answers.map((a) => a.data as CubePayload)),
      };
    }
    const { key, run } = await this.prepareCube(caller, input, opts.usePreagg);
    return (await this.submit(key, run, opts.noCache)) as AsyncAnswer<CubePayload>;
  }

  // --- SQL over the view ---------------------------------------------------------------

  private async prepareSql(caller: Caller, sql: string) {
    const [restrictions, fp] = await Promise.all([
      this.restrictions(caller),
      this.fingerprint(caller.organizationId, caller.snapshot),
    ]);
    const key = keyOf({ kind: 'sql', model: MODEL_VERSION, restrictions, sql, data: fp.version });
    return { key, run: () => this.runSql(sql, restrictions, fp) };
  }

  async sqlQuery(caller: Caller, sql: string): Promise<SqlPayload> {
    const { key, run } = await this.prepareSql(caller, sql);
    return (await this.sync(key, run, 'SQL_QUERY_TIMEOUT')) as SqlPayload;
  }

  async sqlQueryAsync(
    caller: Caller,
    sql: string,
    noCache: boolean,
  ): Promise<AsyncAnswer<SqlPayload>> {
    const { key, run } = await this.prepareSql(caller, sql);
    return (await this.submit(key, run, noCache)) as AsyncAnswer<SqlPayload>;
  }

  /**
   * Parses the statement in the trusted database (parsing runs nothing), refuses anything but
   * one SELECT early, and reads which view columns it needs so the sandbox is given only those
   * (all of them whenever that cannot be told from its names: viewColumnsRead).
   */
  private async inspectSql(facts: OrgFacts, sql: string): Promise<string[]> {
    const json = await facts.withConnection(async (c) =>
      String(
        (
          await c.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR))', [sql])
        ).getRows()[0]![0],
      ),
    );
    const tree = JSON.parse(json) as {
      error?: boolean;
      error_type?: string;
      error_message?: string;
      statements?: unknown[];
    };
    if (tree.error) {
      if (/only select/i.test(tree.error_message ?? '')) {
        // a PIVOT that does not name its values runs a statement of its own first to find them
        const hint = /\bpivot\b/i.test(sql)
          ? "; a PIVOT must name the values it turns into columns (PIVOT ... ON tm IN ('00.TM', '01.LTM') USING ...)"
          : '';
        throw new AppError(
          'SQL_QUERY_NOT_SELECT',
          `Only a single SELECT statement over analytics_full_view is allowed${hint}`,
        );
      }
      throw new AppError(
        'SQL_QUERY_INVALID',
        (tree.error_message ?? 'The statement could not be parsed').split('\n')[0]!.slice(0, 500),
      );
    }
    if (tree.statements?.length !== 1) {
      throw new AppError(
        'SQL_QUERY_NOT_SELECT',
        `Exactly one SELECT statement is allowed; this text has ${tree.statements?.length ?? 0}`,
      );
    }
    return viewColumnsRead(tree.statements);
  }

  /**
   * Runs fn with the organization's database held open: closeIdle leaves it alone until fn ends.
   * A connection counts only while it is open, and a sqlQuery waits for its sandbox slot between
   * two (minutes under load); the idle sweep closed the database meanwhile, and the statement's
   * turn then opened it again in an OrgFacts the engine no longer knew (never closed, the file
   * kept open, and the next query of the organization loaded a private copy).
   */
  private async holding<T>(organizationId: string, fn: () => Promise<T>): Promise<T> {
    this.holds.set(organizationId, (this.holds.get(organizationId) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = this.holds.get(organizationId)! - 1;
      if (n === 0) this.holds.delete(organizationId);
      else this.holds.set(organizationId, n);
    }
  }

  private runSql(sql: string, restrictions: Restrictions, fp: Fingerprint): Promise<SqlPayload> {
    return this.holding(restrictions.organizationId, () => this.runSqlHeld(sql, restrictions, fp));
  }

  private async runSqlHeld(
    sql: string,
    restrictions: Restrictions,
    fp: Fingerprint,
  ): Promise<SqlPayload> {
    const facts = await this.freshFacts(restrictions.organizationId, fp);
    const columns = await this.inspectSql(facts, sql);
    // the rows are written when the statement's turn comes (SandboxPool.withSlot)
    return this.sandbox.withSlot(restrictions.organizationId, async () => {
      const dir = path.join(this.settings.dir, 'sandbox', randomBytes(12).toString('hex'));
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, 'rows.parquet');
      try {
        const view = rowViewSql(restrictions, columns);
        await facts
          .withConnection((c) =>
            c.run(`COPY (${view.sql}) TO ${sqlLiteral(file)} (FORMAT parquet)`, view.params),
          )
          .catch((error: unknown) => {
            throw outOfRange(error);
          });
        const result = await this.sandbox.run(file, sql);
        if (!result.ok) throw new AppError(result.errorCode, result.message);
        return { schema: result.schema, rows: result.rows };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  // --- runs, cache, waiting ----------------------------------------------------------------

  private start(
    key: string,
    run: () => Promise<CubePayload | SqlPayload>,
    fresh: boolean,
  ): Promise<CubePayload | SqlPayload> {
    const running = this.inflight.get(key);
    if (running) return running;
    if (!fresh) {
      const cached = this.cache.get(key);
      if (cached) {
        // least recently used goes first: re-insert on every hit
        this.cache.delete(key);
        this.cache.set(key, cached);
        return Promise.resolve(cached.value);
      }
    }
    this.failures.delete(key);
    const promise = run()
      .then((value) => {
        this.remember(key, value);
        return value;
      })
      .catch((error: unknown) => {
        this.failures.set(key, { error, at: Date.now() });
        throw error;
      })
      .finally(() => this.inflight.delete(key));
    // a run nobody awaits any more (the caller timed out) must not be an unhandled rejection
    promise.catch(() => {});
    this.inflight.set(key, promise);
    return promise;
  }

  private remember(key: string, value: CubePayload | SqlPayload): void {
    const max = this.settings.resultCacheMb * 1_048_576;
    const bytes = answerBytes(value);
    // an answer larger than the whole budget is not kept (it would push every other one out)
    if (bytes > max) return;
    const previous = this.cache.get(key);
    if (previous) {
      this.cache.delete(key);
      this.cacheBytes -= previous.bytes;
    }
    this.cache.set(key, { value, bytes });
    this.cacheBytes += bytes;
    for (const [k, entry] of this.cache) {
      if (this.cacheBytes <= max) break;
      this.cache.delete(k);
      this.cacheBytes -= entry.bytes;
    }
  }

  /** What the answer cache holds: entries, their counted bytes (answerBytes), the budget. */
  cacheStats(): { entries: number; bytes: number; limitBytes: number } {
    return {
      entries: this.cache.size,
      bytes: this.cacheBytes,
      limitBytes: this.settings.resultCacheMb * 1_048_576,
    };
  }

  /** The synchronous window: the answer, or TIMEOUT while the run goes on for a later poll. */
  private async sync(
    key: string,
    run: () => Promise<CubePayload | SqlPayload>,
    timeoutCode: ErrorCode,
  ): Promise<CubePayload | SqlPayload> {
    const promise = this.start(key, run, false);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AppError(
              timeoutCode,
              `The query did not finish within ${this.settings.syncTimeoutMs} ms; it goes on running: poll for it with the same body`,
            ),
          ),
        this.settings.syncTimeoutMs,
      );
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Submit or poll: the answer when it is ready within the short wait, else processing. */
  private async submit(
    key: string,
    run: () => Promise<CubePayload | SqlPayload>,
    noCache: boolean,
  ): Promise<AsyncAnswer<CubePayload | SqlPayload>> {
    const failure = this.failures.get(key);
    if (failure && !noCache && !this.inflight.has(key)) {
      this.failures.delete(key);
      if (Date.now() - failure.at < FAILURE_TTL_MS) throw failure.error;
    }
    const promise = this.start(key, run, noCache);
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<undefined>(
      (resolve) => (timer = setTimeout(() => resolve(undefined), this.settings.asyncWaitMs)),
    );
    try {
      const value = await Promise.race([promise, wait]);
      return value === undefined ? { status: 'processing' } : { status: 'completed', data: value };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the databases unused for idleMs (tests pass a shorter time); a held one stays open. */
  closeIdle(idleMs = IDLE_CLOSE_MS): void {
    const now = Date.now();
    for (const [id, facts] of this.orgs) {
      if (facts.active === 0 && !this.holds.has(id) && now - facts.lastUsed >= idleMs) {
        facts.close();
        this.orgs.delete(id);
        this.readings.delete(id);
      }
    }
    for (const [key, f] of this.failures)
      if (now - f.at > FAILURE_TTL_MS) this.failures.delete(key);
  }

  /** What the sqlQuery sandboxes run and wait now (SandboxPool.stats). */
  sandboxStats(): ReturnType<SandboxPool['stats']> {
    return this.sandbox.stats();
  }

  close(): void {
    clearInterval(this.idleTimer);
    this.sandbox.close();
    for (const facts of this.orgs.values()) facts.close();
    this.orgs.clear();
    this.cache.clear();
  }
}

const engines = new WeakMap<Deps, AnalyticsEngine>();

/** The process's engine for these dependencies (one per runtime). */
export function analyticsFor(deps: Deps): AnalyticsEngine {
  let engine = engines.get(deps);
  if (!engine) {
    engine = new AnalyticsEngine(deps);
    engines.set(deps, engine);
  }
  return engine;
}

/** Closes the engine of these dependencies, if one was started. */
export function closeAnalytics(deps: Deps): void {
  engines.get(deps)?.close();
  engines.delete(deps);
}
