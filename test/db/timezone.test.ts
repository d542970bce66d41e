// Every session of the service's pools is in UTC, whatever the server's own default time zone: the
// date filters compare calendar dates with timestamps in UTC, as docs/ingestion.md says.
import pg from 'pg';
import t from 'tap';
import { createPool } from '../../src/db/pool.ts';
import { createTestDatabase } from '../helpers/db.ts';

t.test(
  "the pool's sessions are in UTC even when the database's default is another zone",
  async (t) => {
    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${db.name}" SET TimeZone = 'America/Los_Angeles'`);
    await admin.end();
    const plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    t.equal(
      (await plain.query('SHOW TimeZone')).rows[0].TimeZone,
      'America/Los_Angeles',
      'a session of its own takes the default',
    );
    await plain.end();
    const pool = createPool(db.url, 1);
    t.teardown(() => pool.end());
    t.equal((await pool.query('SHOW TimeZone')).rows[0].TimeZone, 'UTC');
    t.equal(
      (await pool.query(`SELECT ('2024-05-10'::date + 1)::timestamptz::text AS t`)).rows[0].t,
      '2024-05-11 00:00:00+00',
      'a day ends at midnight UTC',
    );
  },
);
