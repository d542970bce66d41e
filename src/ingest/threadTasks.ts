// The tasks of the worker threads (src/workers/tasks.ts), each with its input and its answer:
// added here to ThreadTasks, declared empty below the domain, by declaration merging.
import type { TitleCluster, TitleItem } from '../catalog/cluster/index.ts';
import type { LocateInput, LocatedTable } from './fileTypes.ts';
import type { NormalizeInput, NormalizeOutput } from './normalizeTypes.ts';

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

declare module '../workers/tasks.ts' {
  interface ThreadTasks {
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
}
