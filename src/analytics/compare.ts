// compareDateRange, as Cube answers it: a query whose time dimension names several date ranges is
// one query per range (api-gateway compareDateRangeTransformer), each answered and cached like any
// other, and the answer is Cube's multi-result shape (rust/cubeorchestrator RequestResultDataMulti:
// queryType, results, pivotQuery, slowQuery), each row of a result carrying its range as
// `compareDateRange: "<from> - <to>"` (get_date_range_value).
import type { CubePayload, QueryEcho, Row } from './envelope.ts';
import type { QueryInput } from './query.ts';

export interface ComparePayload {
  queryType: 'compareDateRangeQuery';
  results: CubePayload[];
  pivotQuery: QueryEcho & { queryType: 'compareDateRangeQuery' };
  slowQuery: false;
}

/** The queries of a compareDateRange query, one per range in order, or null for a plain query. */
export function compareQueries(input: QueryInput): QueryInput[] | null {
  const tds = input.timeDimensions ?? [];
  const index = tds.findIndex((td) => td.compareDateRange !== undefined);
  if (index < 0) return null;
  return tds[index]!.compareDateRange!.map((dateRange) => ({
    ...input,
    timeDimensions: tds.map((td, i) => {
      if (i !== index) return td;
      const { compareDateRange: _ranges, ...rest } = td;
      return { ...rest, dateRange };
    }),
  }));
}

/** The range of a result as its rows carry it: the compared time dimension's resolved dateRange. */
function rangeOf(result: CubePayload): string {
  const td = result.query.timeDimensions.find((t) => t.dateRange !== undefined);
  return td!.dateRange!.join(' - ');
}

/** The answers of the queries, in Cube's compareDateRange shape (rows copied: answers are cached). */
export function compareEnvelope(answers: CubePayload[]): ComparePayload {
  const results = answers.map((a) => {
    const range = rangeOf(a);
    return { ...a, data: a.data.map((row): Row => ({ ...row, compareDateRange: range })) };
  });
  const first = results[0]!.query;
  return {
    queryType: 'compareDateRangeQuery',
    results,
    pivotQuery: {
      ...first,
      dimensions: ['compareDateRange', ...first.dimensions],
      queryType: 'compareDateRangeQuery',
    },
    slowQuery: false,
  };
}
