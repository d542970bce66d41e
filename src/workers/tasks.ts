// The tasks the worker threads run, by name: what each takes and answers, and which worker module
// (workers/<module>.ts) exports it under which name. The pool's task methods
// (threads.normalize(input)) are typed from ThreadTasks; each worker module declares its function
// with the same types (TaskInput, TaskOutput), so a change on either side is a type error on the
// other. Types only travel this way: src/ imports nothing of workers/, and the pool names the
// domain's types without running any of its code (type-only imports, test/architecture/layers).
import type { TitleCluster, TitleItem } from '../catalog/cluster/index.ts';
import type { LocateInput, LocatedTable } from '../ingest/fileTypes.ts';
import type { NormalizeInput, NormalizeOutput } from '../ingest/normalizeTypes.ts';

/** A refusal as a thread answers it: errors lose their class at a thread boundary (threadPool.ts rebuilds the AppError). */
export interface WorkerFailure {
  ok: false;
  errorCode: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What a worker function answers: its result marked ok, or a refusal. */
export type WorkerResult<T extends object> = ({ ok: true } & T) | WorkerFailure;

export interface HeaderHashInput {
  cells: unknown;
}

export interface SampleInput {
  path: string;
  kind: 'parquet' | 'csv_with_header' | 'raw_delimited';
  delimiter?: string | undefined;
  quote?: '"' | '';
  startRow: number;
  endRow: number;
}

export interface ClusterInput {
  items: TitleItem[];
  threshold?: number;
}

/** Each task's input and its answer when it succeeds. */
export interface ThreadTasks {
  /** the header hash of DESIGN.md and the normalized cells (workers/headerHash.ts) */
  headerHash: { input: HeaderHashInput; output: { hash: string; normalized: string[] } };
  /** the statement file reader: untrusted bytes in, the located table out (workers/statementFile.ts) */
  locateTable: { input: LocateInput; output: LocatedTable };
  /** a located table to standard rows with DuckDB (workers/normalize.ts) */
  normalize: { input: NormalizeInput; output: NormalizeOutput };
  /** rows [startRow, endRow) of one file variant (workers/sample.ts) */
  sample: { input: SampleInput; output: { columns: string[]; rows: unknown[][] } };
  /** title clustering, CPU-bound (workers/cluster.ts) */
  clusterTitles: { input: ClusterInput; output: { clusters: TitleCluster[] } };
}

export type TaskName = keyof ThreadTasks;
export type TaskInput<K extends TaskName> = ThreadTasks[K]['input'];
export type TaskOutput<K extends TaskName> = ThreadTasks[K]['output'];

/** The function a worker module exports for task K. */
export type TaskFunction<K extends TaskName> = (
  input: TaskInput<K>,
) => WorkerResult<TaskOutput<K>> | Promise<WorkerResult<TaskOutput<K>>>;

/** Where each task's function is: workers/<module>.ts, its export `fn`. */
export const taskFunctions = {
  headerHash: { module: 'headerHash', fn: 'headerHash' },
  locateTable: { module: 'statementFile', fn: 'locateTable' },
  normalize: { module: 'normalize', fn: 'normalizeStatement' },
  sample: { module: 'sample', fn: 'sampleFile' },
  clusterTitles: { module: 'cluster', fn: 'clusterTitlesTask' },
} as const satisfies Record<TaskName, { module: string; fn: string }>;
