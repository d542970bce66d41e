// The answer of cube.query in the shape of Cube's /v1/load: the fields in the order Cube's
// RequestResultData serialises them (rust/cubeorchestrator/src/query_result_transform.rs: query,
// lastRefreshTime, annotation, dataSource, dbType, external, slowQuery, total, data), and the
// query echoed in the order of its normalized query (measures, dimensions, timeDimensions, limit,
// offset, total, timezone, filters, rowLimit, order), with the filters as they were sent.
import {
  isOrganizationFilter,
  type FilterInput,
  type NormalizedFilterNode,
  type NormalizedQuery,
  type NormalizedTimeDimension,
  type QueryInput,
} from './query.ts';

export type Row = Record<string, string | null>;

/** A filter as sent, its values as text (Cube's normalizeQueryFilters: every non-null value `.toString()`). */
export type EchoedFilter =
  | { member: string; operator: string; values?: (string | null)[] }
  | { and: EchoedFilter[] }
  | { or: EchoedFilter[] };

export interface QueryEcho {
  measures: string[];
  dimensions: string[];
  timeDimensions: NormalizedTimeDimension[];
  /** only when sent; always empty (a segment named is refused) */
  segments?: string[];
  limit: number;
  offset?: number;
  total?: boolean;
  timezone: string;
  filters: (EchoedFilter | NormalizedFilterNode)[];
  rowLimit: number;
  order?: { id: string; desc: boolean }[];
  ungrouped?: boolean;
}

export interface Annotation {
  measures: Record<string, unknown>;
  dimensions: Record<string, unknown>;
  /** the model defines no segments; Cube always sends the group */
  segments: Record<string, unknown>;
  timeDimensions: Record<string, unknown>;
}

export interface CubePayload {
  query: QueryEcho;
  lastRefreshTime: string;
  annotation: Annotation;
  dataSource: 'default';
  dbType: 'duckdb';
  external: false;
  slowQuery: false;
  total?: number;
  data: Row[];
}

/** A filter as sent, or undefined when it is stripped (on organization_id, or a group left empty by that). */
function echoFilter(f: FilterInput): EchoedFilter | undefined {
  if (isOrganizationFilter(f)) return undefined;
  const children = f.and ?? f.or;
  if (children) {
    const kept = echoFilters(children);
    if (kept.length === 0 && children.length > 0) return undefined;
    return f.and ? { and: kept } : { or: kept };
  }
  const values = f.values?.map((v) => (v === null ? null : String(v)));
  return { member: f.member!, operator: f.operator!, ...(values !== undefined ? { values } : {}) };
}

const echoFilters = (filters: FilterInput[]): EchoedFilter[] =>
  filters.map(echoFilter).filter((f): f is EchoedFilter => f !== undefined);

/**
 * The query as the answer echoes it: members and time dimensions normalized (a relative dateRange
 * resolved, as Cube echoes it), the filters as they were sent (values as text, phrases and dates
 * not resolved) without the organization_id filters the server strips, followed by the caller's
 * organization filter the server adds: what Cube echoes when a queryRewrite removes the client's
 * tenant filters and adds its own (the echo is the rewritten query), `offset` and `total` only
 * when sent.
 */
export function echoQuery(input: QueryInput, q: NormalizedQuery): QueryEcho {
  const injected = q.filters.at(-1)!;
  return {
    measures: q.measures,
    dimensions: q.dimensions,
    timeDimensions: q.timeDimensions,
    ...(input.segments !== undefined ? { segments: input.segments } : {}),
    limit: q.limit,
    ...(q.offset !== undefined ? { offset: q.offset } : {}),
    ...(input.total !== undefined ? { total: input.total } : {}),
    timezone: q.timezone,
    filters: [...echoFilters(input.filters ?? []), injected],
    rowLimit: q.rowLimit,
    ...(q.order ? { order: q.order } : {}),
    ...(input.ungrouped !== undefined ? { ungrouped: input.ungrouped } : {}),
  };
}

/** The envelope around an answer, in Cube's field order. */
export function cubeEnvelope(
  query: QueryEcho,
  annotation: Annotation,
  data: Row[],
  total: number | undefined,
): CubePayload {
  return {
    query,
    lastRefreshTime: new Date().toISOString(),
    annotation,
    dataSource: 'default',
    dbType: 'duckdb',
    // no external pre-aggregation store; a query slower than the synchronous window answers
    // TIMEOUT or "processing" instead of a slow answer
    external: false,
    slowQuery: false,
    ...(total !== undefined ? { total } : {}),
    data,
  };
}
