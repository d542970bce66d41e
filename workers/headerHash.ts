// The header hash (src/ingest/headerHash.ts) as a thread task: `headerHash` of src/workers/tasks.ts.
import { computeHeaderHash, normalizeHeaderCell } from '../src/ingest/headerHash.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';

export { computeHeaderHash, normalizeHeaderCell, ZERO_WIDTH } from '../src/ingest/headerHash.ts';

export function headerHash(input: TaskInput<'headerHash'>): WorkerResult<TaskOutput<'headerHash'>> {
  const { cells } = input;
  if (!Array.isArray(cells) || cells.length === 0 || !cells.every((c) => typeof c === 'string')) {
    return fail('VALIDATION_FAILED', 'cells must be a non-empty array of strings');
  }
  return { ok: true, hash: computeHeaderHash(cells), normalized: cells.map(normalizeHeaderCell) };
}
