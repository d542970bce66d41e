// The DuckDB connections of a worker thread, so that the thread pool can stop their work before
// it ends the threads (src/workers/threadPool.ts, close). DuckDB work is stopped by interrupting
// its connections, never by ending its thread: a thread ended while DuckDB runs a query in it
// (worker.terminate(), piscina's destroy(), process.exit(), the thread's heap limit) aborts the
// whole process, jobs and requests of every organization with it: node-api's completion of the
// query throws into the torn-down thread (`terminate called after throwing an instance of
// 'Napi::Error'`, SIGABRT).
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BroadcastChannel, isMainThread, threadId, workerData } from 'node:worker_threads';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../src/db/sql.ts';

const open = new Set<DuckDBConnection>();
let stopped = false;

// the pool's channel (one per pool: two services in one process close their pools apart)
const channelName = isMainThread
  ? undefined
  : (workerData as { interruptChannel?: string } | null)?.interruptChannel;
if (channelName) {
  const channel = new BroadcastChannel(channelName);
  // an idle thread is not kept alive by it
  channel.unref();
  channel.onmessage = () => {
    stopped = true;
    for (const c of open) c.interrupt();
    // an instance no task uses is closed now (one in use is, when its task ends)
    if (current && !current.inUse) close(current);
  };
}

let connections = 0;

/** How many connections this thread has opened by connect() (the tests count a statement's). */
export function connectionsOpened(): number {
  return connections;
}

/** A connection the pool can interrupt; close it with disconnect(). */
export async function connect(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const c = await instance.connect();
  connections++;
  open.add(c);
  if (stopped) c.interrupt();
  return c;
}

export function disconnect(c: DuckDBConnection): void {
  open.delete(c);
  c.closeSync();
}

/** Whether the pool is closing: an interrupted query is then the service stopping, not a limit of the work. */
export function stopping(): boolean {
  return stopped;
}

/** The settings a task's DuckDB work runs with (global to the instance: set again when a task's differ). */
export interface InstanceSettings {
  threads: number;
  memoryLimitMb: number;
  /** DuckDB optimizers left out (`disabled_optimizers`); none unless told */
  disabledOptimizers?: readonly string[];
}

/** How long the thread's instance is kept unused before it is closed and its memory returned. */
const IDLE_CLOSE_MS = 10_000;

interface ThreadInstance {
  instance: DuckDBInstance;
  /** the objects of its catalog once prepared: what a task leaves beyond them is dropped */
  baseline: Set<string>;
  /** the preparations run on it (each once) */
  prepared: Set<Prepare>;
  /** the settings last set (a task that needs the same sets none) */
  settings?: string;
  idle?: NodeJS.Timeout;
  inUse: boolean;
}

/**
 * What a kind of task needs in the instance before its first task (the normalizer's macros): run
 * once per instance, as the same function each time.
 */
export type Prepare = (c: DuckDBConnection) => Promise<void>;

let current: ThreadInstance | undefined;
let created = 0;

/** How many instances this thread has made (the tests see one reused). */
export function instancesCreated(): number {
  return created;
}

// the objects a task can leave in the instance's catalog (temporary ones go with its connections);
// value types apart: listing them (duckdb_types()) cost 140-330 ms on a loaded machine, the rest a few
const CATALOG_OBJECTS = `SELECT 'TABLE', table_name FROM duckdb_tables() WHERE NOT temporary
  UNION ALL SELECT 'VIEW', view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary
  UNION ALL SELECT 'SEQUENCE', sequence_name FROM duckdb_sequences() WHERE NOT temporary`;
const CATALOG_TYPES = `SELECT 'TYPE', type_name FROM duckdb_types() WHERE NOT internal AND database_name = 'memory'`;

async function catalogObjects(c: DuckDBConnection, withTypes: boolean): Promise<string[]> {
  const sql = withTypes ? `${CATALOG_OBJECTS}\n  UNION ALL ${CATALOG_TYPES}` : CATALOG_OBJECTS;
  const rows = (await c.runAndReadAll(sql)).getRows();
  return rows.map(([kind, name]) => `${String(kind)} ${quoteIdent(String(name))}`);
}

/**
 * What a task tells of its catalog: a task that makes objects that outlive its connections (a
 * table, view or sequence not TEMPORARY) calls objectsMade(), one that makes value types (CREATE
 * TYPE) typesMade(); only then is the catalog listed after it to drop them. Most tasks make only
 * temporary ones, which go with their connections: listing the catalog after each (a connection
 * and a query) cost a small statement about 2 ms.
 */
export interface CatalogUse {
  objectsMade(): void;
  typesMade(): void;
}

let listings = 0;

/** How many times this thread has listed its instance's catalog after a task (the tests see it skipped). */
export function catalogListings(): number {
  return listings;
}

function close(entry: ThreadInstance): void {
  clearTimeout(entry.idle);
  if (current === entry) current = undefined;
  entry.instance.closeSync();
}

/**
 * Runs `work` with the thread's DuckDB instance, made on first use (`prepare` runs once on it)
 * and kept for the thread's next tasks: a small statement does not pay for an instance, its
 * settings and its macros each time. `work` opens its own connections (its temporary tables
 * go with them). After it, what it left in the catalog is dropped when it tells it made some
 * (CatalogUse; its value types only when it tells it made those); when it fails, the instance is
 * closed and the next task makes a new one, so that nothing of a failed task (a setting changed,
 * a table half made, an interrupted query) reaches the next. Unused for IDLE_CLOSE_MS, it is closed.
 */
export async function withThreadInstance<T>(
  settings: InstanceSettings,
  prepare: Prepare,
  work: (instance: DuckDBInstance, catalog: CatalogUse) => Promise<T>,
): Promise<T> {
  // (a task run inside another's, which the pool never does, gets an instance of its own)
  const entry = current && !current.inUse ? current : await makeInstance();
  clearTimeout(entry.idle);
  entry.inUse = true;
  let failed = true;
  const made = { objects: false, types: false };
  try {
    await prepared(entry, settings, prepare);
    const result = await work(entry.instance, {
      objectsMade: () => (made.objects = true),
      typesMade: () => (made.types = true),
    });
    failed = false;
    return result;
  } finally {
    entry.inUse = false;
    const leftovers = made.objects || made.types;
    if (failed || stopped || (leftovers && !(await leftoversDropped(entry, made.types))))
      close(entry);
    else if (current === entry) {
      entry.idle = setTimeout(() => close(entry), IDLE_CLOSE_MS);
      entry.idle.unref();
    } else close(entry);
  }
}

/**
 * Runs `prepare` on the instance unless it ran there, and sets `settings` unless they are the
 * ones set last (setting them again cost a small statement tens of milliseconds on a loaded
 * machine). A task that changes one sets it back before it ends (the normalizer's split write);
 * a failed task's instance is closed, whatever it changed.
 */
async function prepared(
  entry: ThreadInstance,
  settings: InstanceSettings,
  prepare: Prepare,
): Promise<void> {
  const optimizers = (settings.disabledOptimizers ?? []).filter((o) => /^[a-z_]+$/.test(o));
  const set = `SET threads = ${Math.floor(settings.threads)}; SET memory_limit = '${Math.floor(settings.memoryLimitMb)}MB'; SET disabled_optimizers = '${optimizers.join(',')}'`;
  if (entry.prepared.has(prepare) && entry.settings === set) return;
  const c = await entry.instance.connect();
  try {
    if (!entry.prepared.has(prepare)) {
      await prepare(c);
      entry.prepared.add(prepare);
      entry.baseline = new Set(await catalogObjects(c, true));
    }
    if (entry.settings !== set) {
      await c.run(set);
      entry.settings = set;
    }
  } finally {
    c.closeSync();
  }
}

async function makeInstance(): Promise<ThreadInstance> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // spill to a directory of this instance's own rather than failing when a large file exceeds
    // memory_limit (DuckDB makes the directory, not its parents, and removes it when closed)
    temp_directory: path.join(tmpdir(), `royalty-duckdb-${process.pid}-${threadId}-${created}`),
  });
  created++;
  const entry: ThreadInstance = {
    instance,
    baseline: new Set(),
    prepared: new Set(),
    inUse: false,
  };
  if (!current) current = entry;
  return entry;
}

/** Drops what a task left in the catalog; false when that fails (the instance is then closed). */
async function leftoversDropped(entry: ThreadInstance, types: boolean): Promise<boolean> {
  listings++;
  try {
    const c = await entry.instance.connect();
    try {
      const left = (await catalogObjects(c, types)).filter((o) => !entry.baseline.has(o));
      // tables and views first: a column may be of a type the task made
      const first = left.filter((o) => /^(TABLE|VIEW) /.test(o));
      const drops = [...first, ...left.filter((o) => !first.includes(o))];
      // (one call: a statement leaves a few, each a query of its own otherwise)
      if (drops.length > 0) await c.run(drops.map((o) => `DROP ${o};`).join('\n'));
      return true;
    } finally {
      c.closeSync();
    }
  } catch {
    return false;
  }
}
