// Tool results are bounded: an assistant gets at most maxRows items of any list, and is told how
// many were left out, so one large answer cannot flood its context.

/** The value with every array cut to maxRows items, and the count of items cut. */
export function bounded(value: unknown, maxRows: number): { value: unknown; omitted: number } {
  let omitted = 0;
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > 8 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      if (v.length > maxRows) omitted += v.length - maxRows;
      return v.slice(0, maxRows).map((item) => walk(item, depth + 1));
    }
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item, depth + 1)]));
  };
  return { value: walk(value, 0), omitted };
}
