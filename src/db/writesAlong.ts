// Writes of a transaction that answer nothing (a row inserted, a job added), sent in the statement
// of a later write of the same transaction as its CTEs: one round trip for all of them. node-pg
// sends a statement only once the one before has answered, and a text of several statements
// cannot carry parameters, so each write of its own is a round trip (the locks of the transaction
// held all along). The stores keep their SQL: they write to `db` as to any Queryable.
import type { Queryable } from './pool.ts';

interface Gathered {
  sql: string;
  params: unknown[];
  /** a SELECT (graphile_worker.add_job): run only when the statement reads it */
  read: boolean;
}

/** What a gathered write answers: nothing, and reading it says so. */
const NO_ANSWER = {
  get rows(): never {
    throw new Error('a write gathered to go along with another statement answers nothing');
  },
  get rowCount(): never {
    throw new Error('a write gathered to go along with another statement answers nothing');
  },
};

export interface WritesAlong {
  /** where the writes go: each is gathered, and answers nothing */
  readonly db: Queryable;
  /**
   * The gathered writes as CTEs for a statement whose own parameters are `$1` to `$(first - 1)`:
   * `ctes` (`, along_1 AS (...)`, to follow its own CTEs), their parameters (from `$first`), and
   * `read`, a column list that reads the SELECTs among them (a statement's CTE runs only when
   * read; an INSERT, UPDATE or DELETE runs anyway): the statement selects it.
   */
  sql(first: number): { ctes: string; params: unknown[]; read: string };
}

/**
 * Gathers the writes made to `db`: an INSERT, UPDATE, DELETE or SELECT each (a statement a CTE
 * can hold), whose `$n` are its parameters (no dollar-quoted text).
 */
export function writesAlong(): WritesAlong {
  const gathered: Gathered[] = [];
  const query = (sql: string, params: unknown[] = []) => {
    const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '';
    if (!['INSERT', 'UPDATE', 'DELETE', 'SELECT'].includes(verb) || sql.includes('$$'))
      throw new Error(`a write that cannot go along with another statement: ${sql.slice(0, 60)}`);
    gathered.push({ sql, params, read: verb === 'SELECT' });
    return Promise.resolve(NO_ANSWER);
  };
  return {
    db: { query } as unknown as Queryable,
    sql(first) {
      const params: unknown[] = [];
      const ctes = gathered.map((write, i) => {
        const offset = first - 1 + params.length;
        params.push(...write.params);
        const sql = write.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
        return `, along_${i} AS (${sql})`;
      });
      const read = gathered.flatMap((write, i) =>
        write.read ? [`(SELECT count(*) FROM along_${i}) AS along_${i}`] : [],
      );
      return { ctes: ctes.join(''), params, read: read.join(', ') };
    },
  };
}
