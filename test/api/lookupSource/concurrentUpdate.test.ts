// Two administrators changing different fields of one lookup entry at the same moment: each
// update reads the entry, changes its own fields and writes the entry, under the entry's row lock,
// so neither change is lost (before, both read the entry first and the second write put back the
// field the first had changed). The row is held locked while both requests start, so they meet.
import t from 'tap';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Lookup editors');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;

async function whileLocked(
  table: string,
  id: string,
  run: () => Promise<unknown[]>,
): Promise<unknown[]> {
  const holder = await srv.deps.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
    const pending = run();
    // both requests have reached the database and wait for the row
    for (let i = 0; i < 100; i++) {
      const { rows } = await srv.deps.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
      );
      if (rows[0]!.n >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    await holder.query('COMMIT');
    return await pending;
  } finally {
    holder.release();
  }
}

t.test('lookupSource.update: two updates of different fields both hold', async (t) => {
  const entry = data(
    await op.mutate('lookupSource.create', {
      original: 'Blenzo Audio',
      earningsSource: 'Blenzo',
      status: 'verified',
    }),
  );
  const [a, b] = await whileLocked('lookup_sources', entry.id, () =>
    Promise.all([
      op.mutate('lookupSource.update', { id: entry.id, earningsCategory: 'streaming' }),
      op.mutate('lookupSource.update', { id: entry.id, earningsParentCompany: 'Blenzo Group' }),
    ]),
  );
  t.ok((a as any).ok && (b as any).ok);
  const after = data(await op.query('lookupSource.getSourceLookup', { id: entry.id }));
  t.same(
    {
      earningsSource: after.earningsSource,
      earningsCategory: after.earningsCategory,
      earningsParentCompany: after.earningsParentCompany,
    },
    {
      earningsSource: 'Blenzo',
      earningsCategory: 'streaming',
      earningsParentCompany: 'Blenzo Group',
    },
  );
});

t.test('lookupSalesType.update: two updates of different fields both hold', async (t) => {
  const entry = data(
    await op.mutate('lookupSalesType.create', { original: 'Blenzo Spin', cleansed: 'Blenzo Spin' }),
  );
  const [a, b] = await whileLocked('lookup_sales_types', entry.id, () =>
    Promise.all([
      op.mutate('lookupSalesType.update', {
        id: entry.id,
        primarySalesType: 'Streaming',
        secondarySalesType: 'Interactive Streaming',
      }),
      op.mutate('lookupSalesType.update', {
        id: entry.id,
        status: 'reviewed',
        reason: { by: 'second editor' },
      }),
    ]),
  );
  t.ok((a as any).ok && (b as any).ok);
  const after = data(await op.query('lookupSalesType.getSalesTypeLookup', { id: entry.id }));
  t.same(
    {
      primarySalesType: after.primarySalesType,
      secondarySalesType: after.secondarySalesType,
      status: after.status,
      reason: after.reason,
    },
    {
      primarySalesType: 'Streaming',
      secondarySalesType: 'Interactive Streaming',
      status: 'reviewed',
      reason: { by: 'second editor' },
    },
  );
});

t.test(
  'an entry deleted while an update waits: SOURCE_LOOKUP_NOT_FOUND, never a half write',
  async (t) => {
    const entry = data(
      await op.mutate('lookupSource.create', {
        original: 'Blenzo Gone',
        earningsSource: 'Blenzo',
        status: 'verified',
      }),
    );
    const holder = await srv.deps.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('DELETE FROM lookup_sources WHERE id = $1', [entry.id]);
      const pending = op.mutate('lookupSource.update', {
        id: entry.id,
        earningsCategory: 'streaming',
      });
      await new Promise((r) => setTimeout(r, 300));
      await holder.query('COMMIT');
      const res: any = await pending;
      t.same(
        { ok: res.ok, code: res.error?.data.code, errorCode: res.error?.data.errorCode },
        { ok: false, code: 'NOT_FOUND', errorCode: 'SOURCE_LOOKUP_NOT_FOUND' },
      );
    } finally {
      holder.release();
    }
  },
);
