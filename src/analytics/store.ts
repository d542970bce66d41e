// The per-organization analytics database: a local DuckDB file holding the organization's
// normalized statement rows (facts) sorted by rightsholder, the rollups the model declares, and
// small tables of the current reference data (statements, exchange rates, names, lookups).
// It is derived data: rebuilt from PostgreSQL and the object store whenever it is missing, its
// layout changed, or it is behind. Each query first reads a fingerprint of what the view depends
// on from PostgreSQL; when it differs from what is loaded, the difference is loaded (statements
// added, reprocessed or removed; reference tables replaced) before the query runs.
import { createHash } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  DuckDBInstance,
  INTEGER,
  LIST,
  VARCHAR,
  listValue,
  type DuckDBConnection,
} from '@duckdb/node-api';
import type { Pool } from '../db/pool.ts';
import { identityKey } from '../catalog/identity.ts';
import { normalizeLookupKey } from '../lookups/normalize.ts';
import { catalogEntries, type CatalogEntry } from './catalog.ts';
import type { ObjectStore } from '../storage/objectStore.ts';
import { MODEL_VERSION, semantic } from './semantic.ts';
import { withRows } from '../ingest/statements.ts';
import { monthIndexSql } from '../periods.ts';

export interface StoreSettings {
  dir: string;
  threads: number;
  memoryMb: number;
}

/** What the view depends on, as fingerprints; `version` changes when any part does. */
export interface Fingerprint {
  statements: string;
  /** the reference tables but the catalog: names, rates' statements, lookups */
  reference: string;
  /** the catalog tables (musical details, products, title clusters and their corrections) */
  catalog: string;
  version: string;
}

// Every input of the view, fingerprinted in PostgreSQL in one round trip: the processed
// statements with their exchange rates, rightsholder and distributor names, the two lookup tables.
// A fingerprint is the row count and the sum of the rows' xmin (the id of the transaction that
// wrote each row version): any insert, update or delete changes one or the other, because a new
// row version always carries a newer transaction id than the version it replaces. It costs a
// scan of the organization's rows, no hashing of their text. (Freezing may change a sum without a
// change of data: that only reloads the reference tables once.) Statements and their rates are
// joined: a statement with n rates counts n times, which still changes whenever either side does.
//
// The scans are skipped when no transaction has committed since the last reading: the statement's
// snapshot (xmin:xmax:in-progress ids) is then the same text, and no fingerprint can have
// changed. A subquery in a CASE branch that is not taken is never executed.
const version = (from: string) =>
  `(SELECT count(*)::text || ':' || coalesce(sum(t.xmin::text::bigint), 0)::text FROM ${from})`;
const unlessUnchanged = (sql: string) =>
  `CASE WHEN pg_current_snapshot()::text = $2 THEN NULL ELSE ${sql} END`;
const FINGERPRINT_SQL = `SELECT pg_current_snapshot()::text AS snapshot,
  ${unlessUnchanged(`(SELECT count(*)::text || ':' || coalesce(sum(s.xmin::text::bigint), 0)::text || ':' || count(x.statement_id)::text || ':'
       || coalesce(sum(x.xmin::text::bigint), 0)::text
     FROM statements s LEFT JOIN statement_fx x ON x.statement_id = s.id
     WHERE s.organization_id = $1 AND ${withRows('s')})`)} AS statements,
  ${unlessUnchanged(version('rightsholders t WHERE t.organization_id = $1'))} AS rightsholders,
  ${unlessUnchanged(version('distributors t WHERE t.organization_id = $1 OR t.organization_id IS NULL'))} AS distributors,
  ${unlessUnchanged(version('lookup_sales_types t'))} AS sales_types,
  ${unlessUnchanged(version('lookup_sources t'))} AS sources,
  ${unlessUnchanged(
    [
      'musical_details t WHERE t.organization_id = $1',
      'musical_detail_overrides t WHERE t.organization_id = $1',
      'products t WHERE t.organization_id = $1',
      'product_musical_details t WHERE t.organization_id = $1',
      'title_clusters t WHERE t.organization_id = $1',
      'product_overrides t WHERE t.organization_id = $1',
    ]
      .map(version)
      .join(` || '/' || `),
  )} AS catalog`;

/** A fingerprint and the snapshot it was read at. */
export interface FingerprintReading {
  snapshot: string;
  fingerprint: Fingerprint;
}

/**
 * Reads the organization's fingerprint, or takes the previous reading without asking PostgreSQL
 * when `snapshot` (read by the caller after its request arrived) is the previous reading's own:
 * then nothing has committed since, anywhere in the cluster.
 */
export async function readFingerprint(
  db: Pick<Pool, 'query'>,
  organizationId: string,
  previous?: FingerprintReading,
  snapshot?: string,
): Promise<FingerprintReading> {
  if (previous && snapshot !== undefined && snapshot === previous.snapshot) return previous;
  const { rows } = await db.query<
    Record<
      | 'snapshot'
      | 'statements'
      | 'rightsholders'
      | 'distributors'
      | 'sales_types'
      | 'sources'
      | 'catalog',
      string | null
    >
  >({
    // prepared once per connection: planning the five subqueries costs more than skipping them
    name: 'analytics_fingerprint',
    text: FINGERPRINT_SQL,
    values: [organizationId, previous?.snapshot ?? ''],
  });
  const r = rows[0]!;
  if (previous && r.statements === null)
    return { snapshot: r.snapshot!, fingerprint: previous.fingerprint };
  const reference = [r.rightsholders, r.distributors, r.sales_types, r.sources].join('|');
  const version = createHash('sha256')
    .update(`${MODEL_VERSION}|${r.statements}|${reference}|${r.catalog}`)
    .digest('hex')
    .slice(0, 24);
  return {
    snapshot: r.snapshot!,
    fingerprint: { statements: r.statements!, reference, catalog: r.catalog!, version },
  };
}

/** Layout of the database file: a change rebuilds it. */
const LAYOUT = createHash('sha256')
  .update(
    JSON.stringify([semantic.model.facts, semantic.model.rollups, 'dims-v2', 'catalog-songs']),
  )
  .digest('hex')
  .slice(0, 16);

const factColumns = semantic.model.facts.columns;
const sortKey = semantic.model.facts.sortKey.join(', ');

// month_index: the last calendar month of the statement period, counted from year 0
const MONTH_INDEX = monthIndexSql({
  year: 'p.stmt_year',
  period: 'p.stmt_period',
  cadence: 'p.stmt_cadence',
});

const FACTS_PROJECTION = factColumns
  .map((c) =>
    c.name === 'month_index'
      ? `CAST(${MONTH_INDEX} AS INTEGER) AS month_index`
      : `CAST(p.${c.name} AS ${c.sqlType}) AS ${c.name}`,
  )
  .join(',\n  ');

const DDL = [
  `CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS ${semantic.model.facts.table} (${factColumns.map((c) => `${c.name} ${c.sqlType}`).join(', ')})`,
  `CREATE TABLE IF NOT EXISTS loaded (statement_id VARCHAR PRIMARY KEY, normalized_version INTEGER, normalized_key VARCHAR, row_count BIGINT)`,
  `CREATE TABLE IF NOT EXISTS statement_months (organization_id VARCHAR, statement_id VARCHAR, rightsholder_id VARCHAR, month_index INTEGER)`,
  `CREATE TABLE IF NOT EXISTS stmt (statement_id VARCHAR, rightsholder_id VARCHAR, distributor_id VARCHAR, file_name VARCHAR, custom_name VARCHAR)`,
  // the rate to 18 decimals in two parts: rate to 14, rate_lo the next four × 10^14 (model.ts, usdSum)
  `CREATE TABLE IF NOT EXISTS fx (statement_id VARCHAR, currency VARCHAR, rate DECIMAL(20,14), rate_lo DECIMAL(18,4))`,
  `CREATE TABLE IF NOT EXISTS rightsholder (id VARCHAR, name VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS distributor (id VARCHAR, name VARCHAR)`,
  // the catalog as each row sees it (docs/catalog.md "The catalog in analytics"): raw identity → musical detail → product
  `CREATE TABLE IF NOT EXISTS catalog (rightsholder_id VARCHAR, isrc VARCHAR, raw_title VARCHAR, raw_artist VARCHAR, md_id VARCHAR,
     resolved BOOLEAN, track_title VARCHAR, track_artist VARCHAR, release_title VARCHAR, release_artist VARCHAR, release_date DATE,
     release_release_date DATE, product_id VARCHAR, product_title VARCHAR, product_artist VARCHAR, product_release_date DATE,
     product_version VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS lk_sales_type (raw VARCHAR, primary_sales_type VARCHAR, secondary_sales_type VARCHAR, status VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS lk_source (raw VARCHAR, collection_source VARCHAR, earnings_source VARCHAR, earnings_category VARCHAR,
     earnings_parent_company VARCHAR, publisher_source VARCHAR, status VARCHAR)`,
  ...semantic.model.rollups.map((r) => {
    const types = new Map(factColumns.map((c) => [c.name, c.sqlType]));
    const cols = [
      ...r.groupBy.map((c) => `${c} ${types.get(c)}`),
      ...r.sums.map((c) => `${c} DECIMAL(38,12)`),
      `${r.countColumn} BIGINT`,
    ];
    return `CREATE TABLE IF NOT EXISTS ${r.table} (${cols.join(', ')})`;
  }),
];

function rollupInsert(r: (typeof semantic.model.rollups)[number], where: string): string {
  const groups = r.groupBy.join(', ');
  return `INSERT INTO ${r.table} SELECT ${groups}, ${r.sums.map((s) => `sum(${s}) AS ${s}`).join(', ')}, count(*) AS ${r.countColumn}
    FROM ${semantic.model.facts.table} ${where} GROUP BY ${groups} ORDER BY ${groups}`;
}

/** A small async mutex: one sync of an organization's database at a time. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => (release = r));
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

interface StatementRow {
  id: string;
  rightsholder_id: string;
  distributor_id: string | null;
  normalized_key: string;
  normalized_version: number;
  file_name: string;
  custom_name: string | null;
}

interface FactsPlan {
  remove: string[];
  files: { statement: StatementRow; file: string }[];
  missing: string[];
}

interface Reference {
  fx: { statement_id: string; currency: string; rate: string }[];
  rightsholders: { id: string; name: string }[];
  distributors: { id: string; name: string }[];
  /** undefined: the catalog table is not replaced */
  catalog: Map<string, CatalogEntry> | undefined;
}

export interface SyncReport {
  added: number;
  removed: number;
  /** processed statements whose normalized rows could not be read */
  missing: string[];
}

/**
 * Database files open in this process. DuckDB's file lock is a process's own (fcntl), so a second
 * instance of the same file in one process would open without complaint, and two instances
 * writing one file corrupt it (seen: "Failure while replaying WAL"); a second one gets a private
 * copy instead, as another process does.
 */
const openFiles = new Set<string>();
let privateCopies = 0;

export class OrgFacts {
  private instance: DuckDBInstance | undefined;
  /** the file the instance has open (released from openFiles when it is closed) */
  private openedFile: string | undefined;
  private opening: Promise<DuckDBInstance> | undefined;
  private readonly lock = new Mutex();
  private loadedStatements: string | undefined;
  private loadedReference: string | undefined;
  /** the catalog fingerprint the catalog table was built at, for the facts loaded (undefined: behind) */
  private loadedCatalog: string | undefined;
  private loadedFingerprint: string | undefined;
  /** statements processed in PostgreSQL that are not in the database (object missing) */
  missing: string[] = [];
  lastUsed = Date.now();
  active = 0;

  constructor(
    readonly organizationId: string,
    private readonly settings: StoreSettings,
    private readonly log: {
      warn(obj: object, msg: string): void;
      debug(obj: object, msg: string): void;
    },
  ) {}

  private get dir(): string {
    return path.join(this.settings.dir, this.organizationId);
  }

  private async open(): Promise<DuckDBInstance> {
    if (this.instance) return this.instance;
    this.opening ??= this.openFile().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async openFile(): Promise<DuckDBInstance> {
    await mkdir(path.join(this.dir, 'tmp'), { recursive: true });
    const options = {
      threads: String(this.settings.threads),
      memory_limit: `${this.settings.memoryMb}MB`,
      temp_directory: path.join(this.dir, 'tmp'),
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    };
    const privateCopy = () => path.join(this.dir, `facts-${process.pid}-${++privateCopies}.duckdb`);
    const create = async (wanted: string) => {
      // this process has the file open already (a second engine on the same directory): a copy of our own
      let file = openFiles.has(wanted) ? privateCopy() : wanted;
      let instance: DuckDBInstance;
      try {
        instance = await DuckDBInstance.create(file, options);
      } catch (error) {
        // another process holds the file: keep a copy of our own beside it
        if (!/lock/i.test((error as Error).message)) throw error;
        file = privateCopy();
        instance = await DuckDBInstance.create(file, options);
      }
      openFiles.add(file);
      this.openedFile = file;
      return instance;
    };
    let file = path.join(this.dir, 'facts.duckdb');
    let instance = await create(file);
    const c = await instance.connect();
    try {
      await c.run('CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)');
      const layout = (
        await c.runAndReadAll(`SELECT value FROM meta WHERE key = 'layout'`)
      ).getRows()[0]?.[0];
      if (layout !== undefined && layout !== LAYOUT) {
        // a database of an older layout is rebuilt from scratch: it is derived data
        c.closeSync();
        instance.closeSync();
        file = this.openedFile!;
        openFiles.delete(file);
        await rm(file, { force: true });
        await rm(`${file}.wal`, { force: true });
        instance = await create(file);
      }
    } finally {
      c.closeSync();
    }
    const setup = await instance.connect();
    try {
      for (const ddl of DDL) await setup.run(ddl);
      await setup.run(`INSERT OR REPLACE INTO meta VALUES ('layout', $1)`, [LAYOUT]);
    } finally {
      setup.closeSync();
    }
    this.instance = instance;
    return instance;
  }

  /** Runs fn on a fresh connection of the organization's database. */
  async withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    // counted before the first await, so an idle sweep cannot close the database under us
    this.active++;
    this.lastUsed = Date.now();
    let c: DuckDBConnection | undefined;
    try {
      c = await (await this.open()).connect();
      return await fn(c);
    } finally {
      this.active--;
      this.lastUsed = Date.now();
      c?.closeSync();
    }
  }

  /** The fingerprint version of the data the database holds, when it is known to be whole. */
  get loadedVersion(): string | undefined {
    return this.instance ? this.loadedFingerprint : undefined;
  }

  /** What of the database is behind the fingerprint: the facts and the other reference tables, the catalog table. */
  private behind(fp: Fingerprint): { facts: boolean; catalog: boolean } {
    const facts =
      !this.instance ||
      this.loadedStatements !== fp.statements ||
      this.loadedReference !== fp.reference;
    return { facts, catalog: facts || this.loadedCatalog !== fp.catalog };
  }

  /**
   * Brings the database up to the fingerprint; returns what changed (undefined: nothing to do).
   * Everything a sync changes (facts, rollups, reference tables) is committed in one DuckDB
   * transaction, so a query running meanwhile sees the old state or the new one, never a mix.
   * `catalog: false` is for a reader of the facts alone (the block refresh, which is about to
   * change the catalog itself): the catalog table is then left as it was, as if the block had not
   * been refreshed yet, and the next sync that wants it builds it once, after the refresh.
   */
  async ensureFresh(
    db: Pool,
    objects: ObjectStore,
    fp: Fingerprint,
    want: { catalog?: boolean } = {},
  ): Promise<SyncReport | undefined> {
    const wanted = (b: { facts: boolean; catalog: boolean }) =>
      b.facts || (want.catalog !== false && b.catalog);
    if (!wanted(this.behind(fp))) return undefined;
    return this.lock.run(async () => {
      const behind = this.behind(fp);
      if (!wanted(behind)) return undefined;
      const withCatalog = want.catalog !== false && behind.catalog;
      const statements = behind.facts ? await this.processedStatements(db) : undefined;
      const report = await this.withConnection(async (c) => {
        const plan = statements
          ? await this.planFacts(c, objects, statements)
          : { remove: [], files: [], missing: this.missing };
        const reference = await this.fetchReference(db, statements !== undefined, withCatalog);
        await c.run('BEGIN TRANSACTION');
        try {
          await this.applyFacts(c, plan);
          await this.swapReference(c, db, statements, reference);
          await c.run('COMMIT');
        } catch (error) {
          await c.run('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          await Promise.all(plan.files.map((f) => rm(f.file, { force: true })));
        }
        // folding the WAL into the file is housekeeping, not part of the sync: DuckDB refuses it
        // while another connection's write transaction is open (it then checkpoints later by
        // itself), and that must not fail the query that brought the data up to date
        if (plan.files.length > 0 || plan.remove.length > 0) {
          await c
            .run('CHECKPOINT')
            .catch((error: unknown) =>
              this.log.debug({ err: error }, 'analytics checkpoint deferred'),
            );
        }
        return {
          added: plan.files.length,
          removed: plan.remove.filter((id) => !statements?.some((s) => s.id === id)).length,
          missing: plan.missing,
          factsChanged: plan.files.length > 0 || plan.remove.length > 0,
        };
      });
      const { factsChanged, ...sync } = report;
      this.missing = sync.missing;
      // a statement that could not be read is retried on the next query
      this.loadedStatements = sync.missing.length === 0 ? fp.statements : undefined;
      this.loadedReference = fp.reference;
      // a catalog table left as it was still fits facts that did not change
      if (withCatalog) this.loadedCatalog = fp.catalog;
      else if (factsChanged) this.loadedCatalog = undefined;
      this.loadedFingerprint =
        sync.missing.length === 0 && this.loadedCatalog === fp.catalog ? fp.version : undefined;
      return sync;
    });
  }

  private async processedStatements(db: Pool): Promise<StatementRow[]> {
    const { rows } = await db.query<StatementRow>(
      `SELECT id, rightsholder_id, distributor_id, normalized_key, normalized_version, file_name, custom_name
       FROM statements WHERE organization_id = $1 AND ${withRows()}`,
      [this.organizationId],
    );
    return rows;
  }

  /** Which statements leave and which arrive; the arriving ones are downloaded. */
  private async planFacts(
    c: DuckDBConnection,
    objects: ObjectStore,
    statements: StatementRow[],
  ): Promise<FactsPlan> {
    const loaded = new Map(
      (await c.runAndReadAll('SELECT statement_id, normalized_version FROM loaded'))
        .getRows()
        .map((r) => [String(r[0]), Number(r[1])]),
    );
    const wanted = new Map(statements.map((s) => [s.id, s]));
    const remove = [...loaded.keys()].filter(
      (id) => wanted.get(id)?.normalized_version !== loaded.get(id),
    );
    const add = statements.filter((s) => loaded.get(s.id) !== s.normalized_version);
    const files: FactsPlan['files'] = [];
    const missing: string[] = [];
    if (add.length === 0) return { remove, files, missing };
    const incoming = path.join(this.dir, 'incoming');
    await mkdir(incoming, { recursive: true });
    const queue = [...add];
    const download = async () => {
      for (let s = queue.shift(); s; s = queue.shift()) {
        const file = path.join(incoming, `${s.id}-${s.normalized_version}.parquet`);
        try {
          await pipeline(await objects.getStream(s.normalized_key), createWriteStream(file));
          files.push({ statement: s, file });
        } catch (error) {
          await rm(file, { force: true });
          missing.push(s.id);
          this.log.warn(
            { err: error, statementId: s.id, key: s.normalized_key },
            'normalized rows of a processed statement could not be read',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, download));
    return { remove, files, missing };
  }

  private async applyFacts(c: DuckDBConnection, plan: FactsPlan): Promise<void> {
    const { remove, files } = plan;
    if (remove.length === 0 && files.length === 0) return;
    const facts = semantic.model.facts.table;
    // lists are typed explicitly: an empty one has no item type to infer
    const strings = LIST(VARCHAR);
    const ids = listValue([...remove, ...files.map((f) => f.statement.id)]);
    const before = Number(
      (await c.runAndReadAll(`SELECT count(*) FROM ${facts}`)).getRows()[0]![0],
    );
    for (const table of [
      facts,
      'loaded',
      'statement_months',
      ...semantic.model.rollups.map((r) => r.table),
    ]) {
      await c.run(
        `DELETE FROM ${table} WHERE statement_id IN (SELECT unnest($1::VARCHAR[]))`,
        [ids],
        [strings],
      );
    }
    if (files.length > 0) {
      // rows of another organization can never enter, whatever a file holds
      await c.run(
        `INSERT INTO ${facts} SELECT ${FACTS_PROJECTION}
         FROM read_parquet($1::VARCHAR[], union_by_name = true) p WHERE CAST(p.organization_id AS VARCHAR) = $2 ORDER BY ${sortKey}`,
        [listValue(files.map((f) => f.file)), this.organizationId],
        [strings, VARCHAR],
      );
      const added = listValue(files.map((f) => f.statement.id));
      await c.run(
        `INSERT INTO statement_months SELECT organization_id, statement_id, rightsholder_id, max(month_index)
         FROM ${facts} WHERE statement_id IN (SELECT unnest($1::VARCHAR[])) GROUP BY ALL`,
        [added],
        [strings],
      );
      for (const r of semantic.model.rollups)
        await c.run(
          rollupInsert(r, 'WHERE statement_id IN (SELECT unnest($1::VARCHAR[]))'),
          [added],
          [strings],
        );
      await c.run(
        `INSERT INTO loaded SELECT s.id, s.v, s.k, (SELECT count(*) FROM ${facts} WHERE statement_id = s.id)
         FROM (SELECT unnest($1::VARCHAR[]) AS id, unnest($2::INTEGER[]) AS v, unnest($3::VARCHAR[]) AS k) s`,
        [
          added,
          listValue(files.map((f) => f.statement.normalized_version)),
          listValue(files.map((f) => f.statement.normalized_key)),
        ],
        [strings, LIST(INTEGER), strings],
      );
    }
    await this.compactIfNeeded(c, before);
  }

  /**
   * Appended statements keep their rows together, but the table drifts from rightsholder order
   * as they accumulate: once the rows appended since the last sort exceed a quarter of the table,
   * it is rewritten in sort order so per-rightsholder scans stay narrow.
   */
  private async compactIfNeeded(c: DuckDBConnection, rowsBefore: number): Promise<void> {
    const facts = semantic.model.facts.table;
    const total = Number((await c.runAndReadAll(`SELECT count(*) FROM ${facts}`)).getRows()[0]![0]);
    const unsortedBefore = Number(
      (
        await c.runAndReadAll(
          `SELECT coalesce(max(value), '0') FROM meta WHERE key = 'unsorted_rows'`,
        )
      ).getRows()[0]![0],
    );
    // a first load is written sorted; later loads append
    const unsorted = rowsBefore === 0 ? 0 : unsortedBefore + Math.max(0, total - rowsBefore);
    if (unsorted > total / 4) {
      await c.run(
        `CREATE OR REPLACE TEMP TABLE resort AS SELECT * FROM ${facts} ORDER BY ${sortKey}`,
      );
      await c.run(`DELETE FROM ${facts}`);
      await c.run(`INSERT INTO ${facts} SELECT * FROM resort`);
      await c.run('DROP TABLE resort');
      await c.run(`INSERT OR REPLACE INTO meta VALUES ('unsorted_rows', '0')`);
    } else {
      await c.run(`INSERT OR REPLACE INTO meta VALUES ('unsorted_rows', $1)`, [String(unsorted)]);
    }
  }

  /** The current rows of the reference tables asked for: the catalog's, the others' (`base`). */
  private async fetchReference(db: Pool, base: boolean, catalog: boolean): Promise<Reference> {
    const org = this.organizationId;
    const none = Promise.resolve({ rows: [] });
    const [fx, rightsholders, distributors, entries] = await Promise.all([
      base
        ? db.query<{ statement_id: string; currency: string; rate: string }>(
            `SELECT x.statement_id, x.currency, x.rate::text AS rate FROM statement_fx x JOIN statements s ON s.id = x.statement_id
             WHERE s.organization_id = $1 AND ${withRows('s')}`,
            [org],
          )
        : none,
      base
        ? db.query<{ id: string; name: string }>(
            'SELECT id, name FROM rightsholders WHERE organization_id = $1',
            [org],
          )
        : none,
      base
        ? db.query<{ id: string; name: string }>(
            'SELECT id, name FROM distributors WHERE organization_id = $1 OR organization_id IS NULL',
            [org],
          )
        : none,
      catalog ? catalogEntries(db, org) : undefined,
    ]);
    return {
      fx: fx.rows,
      rightsholders: rightsholders.rows,
      distributors: distributors.rows,
      catalog: entries,
    };
  }

  /**
   * Replaces the reference tables with the current rows (inside the caller's transaction): the
   * others with `statements`, the catalog with `reference.catalog`.
   */
  private async swapReference(
    c: DuckDBConnection,
    db: Pool,
    statements: StatementRow[] | undefined,
    reference: Reference,
  ): Promise<void> {
    const lookups = statements ? await resolvedLookupRows(c, db) : undefined;
    const catalogRows = reference.catalog
      ? await catalogRowsOfFacts(c, reference.catalog)
      : undefined;
    for (const table of referenceTables(statements, reference, catalogRows, lookups)) {
      await replaceTable(c, table);
    }
  }

  /** The statements (id → normalized_version) the database holds. */
  async loadedVersions(): Promise<Map<string, number>> {
    return this.withConnection(async (c) => {
      const rows = (
        await c.runAndReadAll('SELECT statement_id, normalized_version FROM loaded')
      ).getRows();
      return new Map(rows.map((r) => [String(r[0]), Number(r[1])]));
    });
  }

  close(): void {
    this.instance?.closeSync();
    this.instance = undefined;
    if (this.openedFile !== undefined) {
      openFiles.delete(this.openedFile);
      // a private copy (derived data) goes with its instance
      if (path.basename(this.openedFile) !== 'facts.duckdb') {
        for (const f of [this.openedFile, `${this.openedFile}.wal`]) rmSync(f, { force: true });
      }
    }
    this.openedFile = undefined;
    this.loadedStatements = undefined;
    this.loadedReference = undefined;
    this.loadedCatalog = undefined;
    this.loadedFingerprint = undefined;
  }
}

/** The distinct non-null values of one column of the facts, as text. */
async function distinctFactValues(c: DuckDBConnection, column: string): Promise<string[]> {
  const reader = await c.runAndReadAll(
    `SELECT DISTINCT ${column} FROM ${semantic.model.facts.table} WHERE ${column} IS NOT NULL`,
  );
  return reader.getRows().map((r) => String(r[0]));
}

/** The rows of lk_sales_type and lk_source: the facts' raw values resolved through today's lookups. */
async function resolvedLookupRows(
  c: DuckDBConnection,
  db: Pool,
): Promise<{ salesTypes: (string | null)[][]; sources: (string | null)[][] }> {
  const rawSalesTypes = await distinctFactValues(c, 'sales_type');
  const rawSources = await distinctFactValues(c, 'source');
  const salesTypeKeys = rawSalesTypes.map(normalizeLookupKey);
  const sourceKeys = rawSources.map(normalizeLookupKey);
  const [salesTypes, sources] = await Promise.all([
    db.query<{ k: string; p: string | null; s: string | null; status: string }>(
      `SELECT original_normalized AS k, primary_sales_type AS p, secondary_sales_type AS s, status FROM lookup_sales_types WHERE original_normalized = ANY($1)`,
      [[...new Set(salesTypeKeys)]],
    ),
    db.query<{
      k: string;
      c: string | null;
      e: string | null;
      cat: string | null;
      parent: string | null;
      pub: string | null;
      status: string;
    }>(
      `SELECT original_normalized AS k, collection_source AS c, earnings_source AS e, earnings_category AS cat,
         earnings_parent_company AS parent, publisher_source AS pub, status FROM lookup_sources WHERE original_normalized = ANY($1)`,
      [[...new Set(sourceKeys)]],
    ),
  ]);
  const salesTypeByKey = new Map(salesTypes.rows.map((r) => [r.k, r]));
  const sourceByKey = new Map(sources.rows.map((r) => [r.k, r]));
  return {
    salesTypes: rawSalesTypes.flatMap((raw, i) => {
      const e = salesTypeByKey.get(salesTypeKeys[i]!);
      return e ? [[raw, e.p, e.s, e.status]] : [];
    }),
    sources: rawSources.flatMap((raw, i) => {
      const e = sourceByKey.get(sourceKeys[i]!);
      return e ? [[raw, e.c, e.e, e.cat, e.parent, e.pub, e.status]] : [];
    }),
  };
}

/**
 * The rows of the catalog table: each distinct raw identity of the facts, keyed exactly as the
 * block refresh keys musical details, with its catalog entry (identities without one are left out).
 */
async function catalogRowsOfFacts(
  c: DuckDBConnection,
  catalog: Map<string, CatalogEntry>,
): Promise<(string | null)[][]> {
  const identities = (
    await c.runAndReadAll(
      `SELECT DISTINCT rightsholder_id, isrc, raw_title, raw_artist FROM ${semantic.model.facts.table}`,
    )
  ).getRows();
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const rows: (string | null)[][] = [];
  for (const [rh, isrc, title, artist] of identities) {
    const key = identityKey({ isrc: text(isrc), title: text(title), artist: text(artist) });
    const e = key ? catalog.get(`${String(rh)}\u001f${key}`) : undefined;
    if (!e) continue;
    rows.push([
      text(rh),
      text(isrc),
      text(title),
      text(artist),
      e.mdId,
      e.resolved ? 'true' : 'false',
      e.trackTitle,
      e.trackArtist,
      e.releaseTitle,
      e.releaseArtist,
      e.releaseDate,
      e.releaseReleaseDate,
      e.productId,
      e.productTitle,
      e.productArtist,
      e.productReleaseDate,
      e.productVersion,
    ]);
  }
  return rows;
}

/** A reference table's new rows, as text, and how they are cast on the way in (default: as they are). */
interface ReferenceTable {
  name: string;
  width: number;
  rows: (string | null)[][];
  insert?: string;
}

/** The reference tables of the view to replace, with their current rows: the catalog with `catalogRows`, the others with `statements`. */
function referenceTables(
  statements: StatementRow[] | undefined,
  reference: Reference,
  catalogRows: (string | null)[][] | undefined,
  lookups: { salesTypes: (string | null)[][]; sources: (string | null)[][] } | undefined,
): ReferenceTable[] {
  const catalog: ReferenceTable[] = catalogRows
    ? [
        {
          name: 'catalog',
          width: 17,
          rows: catalogRows,
          insert: `SELECT s0, s1, s2, s3, s4, CAST(s5 AS BOOLEAN), s6, s7, s8, s9, TRY_CAST(s10 AS DATE), TRY_CAST(s11 AS DATE), s12, s13, s14,
        TRY_CAST(s15 AS DATE), s16`,
        },
      ]
    : [];
  if (!statements || !lookups) return catalog;
  return [
    {
      name: 'stmt',
      width: 5,
      rows: statements.map((s) => [
        s.id,
        s.rightsholder_id,
        s.distributor_id,
        s.file_name,
        s.custom_name,
      ]),
    },
    // rates arrive as exact text and are cast once, in DuckDB, to the view's two rate parts: the
    // rate rounded to 14 decimals, and what rounding it to 18 instead adds, × 10^14 (exact)
    {
      name: 'fx',
      width: 3,
      rows: reference.fx.map((r) => [r.statement_id, r.currency, r.rate]),
      insert: `SELECT s0, s1, TRY_CAST(s2 AS DECIMAL(20,14)),
        TRY_CAST((TRY_CAST(s2 AS DECIMAL(38,18)) - TRY_CAST(s2 AS DECIMAL(20,14))) * 100000000000000 AS DECIMAL(18,4))`,
    },
    { name: 'rightsholder', width: 2, rows: reference.rightsholders.map((r) => [r.id, r.name]) },
    { name: 'distributor', width: 2, rows: reference.distributors.map((r) => [r.id, r.name]) },
    ...catalog,
    { name: 'lk_sales_type', width: 4, rows: lookups.salesTypes },
    { name: 'lk_source', width: 7, rows: lookups.sources },
  ];
}

/** Replaces a table's rows: appended as text to a staging table, then cast into it. */
async function replaceTable(c: DuckDBConnection, t: ReferenceTable): Promise<void> {
  await c.run(
    `CREATE OR REPLACE TEMP TABLE stage_${t.name} (${Array.from({ length: t.width }, (_, i) => `s${i} VARCHAR`).join(', ')})`,
  );
  const appender = await c.createAppender(`stage_${t.name}`, 'main', 'temp');
  for (const row of t.rows) {
    for (const v of row) {
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    }
    appender.endRow();
  }
  appender.closeSync();
  await c.run(`DELETE FROM main.${t.name}`);
  await c.run(`INSERT INTO main.${t.name} ${t.insert ?? 'SELECT *'} FROM stage_${t.name}`);
  await c.run(`DROP TABLE stage_${t.name}`);
}
