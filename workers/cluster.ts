// Title clustering in a piscina thread (CPU-bound: 100,000 titles take seconds): the
// `clusterTitles` task of src/workers/tasks.ts, answering { ok, clusters }. Bad input answers
// VALIDATION_FAILED, never a thrown error.
import { clusterTitles } from '../src/catalog/cluster/index.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';

export type { ClusterInput } from '../src/workers/tasks.ts';

export function clusterTitlesTask(input: TaskInput<'clusterTitles'>): WorkerResult<TaskOutput<'clusterTitles'>> {
  try {
    if (typeof input !== 'object' || input === null) return fail('VALIDATION_FAILED', 'input must be { items, threshold? }');
    return { ok: true, clusters: clusterTitles(input.items, { threshold: input.threshold }) };
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) return fail('VALIDATION_FAILED', error.message);
    throw error;
  }
}

