import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// int8 (COUNT(*) and friends) as number: counts here stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export function createPool(connectionString: string, max: number): pg.Pool {
  // every session in UTC, whatever the server's default: a calendar date in a filter (`$1::date + 1`
  // against a timestamptz) is its UTC day, as docs/ingestion.md says, on any server
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: 'royalty-engine',
    options: '-c TimeZone=UTC',
  });
  // A client that loses its server (restart, network) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Runs fn in one transaction; rolls back on any error. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The cheapest round trip to the database: resolves once it answers (health checks). */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
