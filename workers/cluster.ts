// Title clustering in a piscina thread (CPU-bound: 100,000 titles take seconds). The default
// export is the agreed interface (it answers the clusters, marked ok so ThreadPool.run accepts
// them: run('cluster', 'default', ...)); clusterTitlesTask answers { ok, clusters } like the
// other workers. Bad input answers VALIDATION_FAILED, never a thrown error.
import { clusterTitles, type TitleCluster, type TitleItem } from '../src/catalog/cluster/index.ts';
import { fail, type WorkerResult } from './results.ts';

export interface ClusterInput {
  items: TitleItem[];
  threshold?: number;
}

export function clusterTitlesTask(input: ClusterInput): WorkerResult<{ clusters: TitleCluster[] }> {
  try {
    if (typeof input !== 'object' || input === null) return fail('VALIDATION_FAILED', 'input must be { items, threshold? }');
    return { ok: true, clusters: clusterTitles(input.items, { threshold: input.threshold }) };
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) return fail('VALIDATION_FAILED', error.message);
    throw error;
  }
}

export default function cluster(input: ClusterInput): (TitleCluster[] & { ok: true }) | { ok: false; errorCode: string; message: string } {
  const r = clusterTitlesTask(input);
  return r.ok ? Object.assign(r.clusters, { ok: true as const }) : r;
}
