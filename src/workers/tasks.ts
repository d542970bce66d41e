// The tasks the worker threads run, by name: what each takes and answers, and which worker module
// (workers/<module>.ts) exports it under which name. The pool's task methods
// (threads.normalize(input)) are typed from ThreadTasks; each worker module declares its function
// with the same types (TaskInput, TaskOutput), so a change on either side is a type error on the
// other. Types only travel this way: src/ imports nothing of workers/.
//
// ThreadTasks is declared empty here, below the domain, and each task is added to it by the domain
// module whose work it is (TypeScript's declaration merging: src/ingest/threadTasks.ts), so the
// pool, which every layer reaches through Deps, imports nothing of the domain.

/** A refusal as a thread answers it: errors lose their class at a thread boundary (threadPool.ts rebuilds the AppError). */
export interface WorkerFailure {
  ok: false;
  errorCode: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What a worker function answers: its result marked ok, or a refusal. */
export type WorkerResult<T extends object> = ({ ok: true } & T) | WorkerFailure;

/** Each task's input and its answer when it succeeds, added by the domain (see above). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ThreadTasks {}

export type TaskName = keyof ThreadTasks;
type TaskShape<K extends TaskName> = ThreadTasks[K] extends { input: infer I; output: infer O extends object } ? { input: I; output: O } : never;
export type TaskInput<K extends TaskName> = TaskShape<K>['input'];
export type TaskOutput<K extends TaskName> = TaskShape<K>['output'];

/** The function a worker module exports for task K. */
export type TaskFunction<K extends TaskName> = (input: TaskInput<K>) => WorkerResult<TaskOutput<K>> | Promise<WorkerResult<TaskOutput<K>>>;

/** Where each task's function is: workers/<module>.ts, its export `fn`. */
export const taskFunctions = {
  headerHash: { module: 'headerHash', fn: 'headerHash' },
  locateTable: { module: 'statementFile', fn: 'locateTable' },
  normalize: { module: 'normalize', fn: 'normalizeStatement' },
  sample: { module: 'sample', fn: 'sampleFile' },
  clusterTitles: { module: 'cluster', fn: 'clusterTitlesTask' },
} as const satisfies Record<TaskName, { module: string; fn: string }>;
