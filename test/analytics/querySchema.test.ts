// The cube query schema on its own: what a crafted query costs to refuse.
import t from 'tap';
import { cubeQuerySchema } from '../../src/analytics/query.ts';

const V = (n: string) => `analytics_full_view.${n}`;
const rh = { member: V('rightsholder_id'), operator: 'equals', values: ['rh-1'] };

t.test('a query is told at most 100 issues, the bounds first', async (t) => {
  // before: one issue per bad value, 150,001 here (1.3 s of the event loop for the schema alone,
  // for an answer that shows 20); the bound on values came after them all
  const bad = Array.from({ length: 1_000 }, () => 'abc');
  const query = {
    measures: [V('units')],
    filters: [
      rh,
      ...Array.from({ length: 150 }, () => ({
        member: V('stmt_year'),
        operator: 'equals',
        values: bad,
      })),
    ],
  };
  const result = cubeQuerySchema.safeParse(query);
  t.equal(result.success, false);
  if (result.success) return;
  t.equal(result.error.issues.length, 100);
  t.same(result.error.issues[0], {
    code: 'custom',
    path: ['filters'],
    message: 'the filters of a query have at most 10000 values in all (these have 150001)',
  });
  t.same(result.error.issues[1], {
    code: 'custom',
    path: ['filters', 1, 'values', 0],
    message: "analytics_full_view.stmt_year is a number: 'abc' is not one",
  });
  t.same(result.error.issues[2]!.path, ['filters', 1, 'values', 1], 'each value at its own index');
});

t.test('a repeated bad value is reported at each of its indexes', async (t) => {
  // before: indexOf gave every repetition the index of the first
  const result = cubeQuerySchema.safeParse({
    measures: [V('units')],
    filters: [
      rh,
      { member: V('stmt_year'), operator: 'notEquals', values: ['2024', 'abc', null, 'abc'] },
    ],
  });
  t.equal(result.success, false);
  if (result.success) return;
  t.same(
    result.error.issues.map((i) => i.path),
    [
      ['filters', 1, 'values', 1],
      ['filters', 1, 'values', 3],
    ],
  );
});
