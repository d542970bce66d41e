// Title clustering in a piscina thread (CPU-bound: 100,000 titles take seconds): the
// `clusterTitles` task of src/workers/tasks.ts, answering { ok, clusters }. Bad input answers
// VALIDATION_FAILED, never a thrown error. A block with Japanese titles (kanji beside kana) has
// its kanji read by the thread's kuromoji reader, built the first time one is needed.
import { clusterTitles } from '../src/catalog/cluster/index.ts';
import { needsJapaneseReader, japaneseReader } from '../src/catalog/cluster/romanize.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';

export type { ClusterInput } from '../src/workers/tasks.ts';

export async function clusterTitlesTask(
  input: TaskInput<'clusterTitles'>,
): Promise<WorkerResult<TaskOutput<'clusterTitles'>>> {
  try {
    if (typeof input !== 'object' || input === null)
      return fail('VALIDATION_FAILED', 'input must be { items, threshold? }');
    const titles = Array.isArray(input.items)
      ? input.items.map((i) => (typeof i?.title === 'string' ? i.title : ''))
      : [];
    const readJapanese = needsJapaneseReader(titles) ? await japaneseReader() : undefined;
    return {
      ok: true,
      clusters: clusterTitles(input.items, { threshold: input.threshold, readJapanese }),
    };
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError)
      return fail('VALIDATION_FAILED', error.message);
    throw error;
  }
}
