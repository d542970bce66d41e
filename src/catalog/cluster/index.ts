// The title-clustering engine of the catalog: pure functions, run in workers/cluster.ts.
export { normalizeTitle } from './normalize.ts';
export { titleSimilarity, DEFAULT_THRESHOLD } from './similarity.ts';
export { clusterTitles, type TitleItem, type TitleCluster } from './cluster.ts';
