// dataFreshness.*: latest periods, catalog coverage, ingestion statistics and readiness of some
// rightsholders, within the caller's organization and data access.
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';
import type { QueryName } from '../../helpers/procedures.ts';

const srv = await startTestHandler(t, { env: { LOG_LEVEL: 'error' } });
const owner = await newOrganization(srv, 'Freshness Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const other = await newOrganization(srv, 'Foreign Org');
const foreign = await seedRightsholder(srv, other.organizationId, 'Foreign Artist');
const unknown = '00000000-0000-4000-8000-000000000000';

async function get(
  procedure: QueryName<'dataFreshness'>,
  rightsholderIds: string[],
  client = owner.client,
) {
  // loosely typed: the answer's shape depends on the procedure
  const res: Outcome<any> = await client.query(`dataFreshness.${procedure}`, {
    organizationId: org,
    rightsholderIds,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

t.test('checkEarnings: latest period per rightsholder and distributor', async (t) => {
  const data = await get('checkEarnings', [ds.rh2, ds.rh1, foreign, unknown]);
  t.same(
    data.rightsholders.map((r: { rightsholderId: string }) => r.rightsholderId),
    [ds.rh2, ds.rh1],
    'ids of other organizations and unknown ids are left out',
  );
  const rh1 = data.rightsholders[1];
  t.match(rh1, {
    rightsholderName: 'Artist One',
    latestPeriod: '2024M03',
    latestPeriodEnd: '2024-03-31',
    latestStatementId: ds.s1,
    statementCount: 2,
    lastIngestedAt: /^\d{4}-\d{2}-\d{2}T/,
  });
  t.same(
    rh1.distributors.map((d: Record<string, unknown>) => [
      d.distributorId,
      d.latestPeriod,
      d.latestPeriodEnd,
      d.statementCount,
    ]),
    [
      [ds.d2, '2023Q04', '2023-12-31', 1],
      [ds.d1, '2024M03', '2024-03-31', 1],
    ],
  );
  t.match(data.rightsholders[0], {
    latestPeriod: '2024M01',
    latestPeriodEnd: '2024-01-31',
    distributors: [{ distributorName: 'Own Distribution' }],
  });
});

t.test('checkProducts: tracks from the statement rows, none enriched yet', async (t) => {
  const data = await get('checkProducts', [ds.rh1, ds.rh2]);
  t.same(data, {
    catalogAvailable: false,
    rightsholders: [
      {
        rightsholderId: ds.rh1,
        rightsholderName: 'Artist One',
        tracks: 6,
        tracksWithIsrc: 1,
        rowsWithoutTrack: 0,
        products: 6,
        enrichedTracks: 0,
        enrichedPercentage: '0',
      },
      {
        rightsholderId: ds.rh2,
        rightsholderName: 'Artist Two',
        tracks: 1,
        tracksWithIsrc: 0,
        rowsWithoutTrack: 0,
        products: 1,
        enrichedTracks: 0,
        enrichedPercentage: '0',
      },
    ],
  });
});

t.test('ingestionStats: statements by status, rows, earnings, flags', async (t) => {
  await srv.deps.pool.query(
    `INSERT INTO statement_flags (organization_id, statement_id, kind, severity, message, resolved) VALUES
       ($1, $2, 'missing_fx_rate', 'error', 'no rate', false), ($1, $2, 'duplicate_upload', 'warning', 'dup', true), ($1, $3, 'overlapping_period', 'warning', 'overlap', false)`,
    [org, ds.s3, ds.s1],
  );
  // a statement being reprocessed: its previous version's rows still count until the new one replaces them
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: ds.rh2,
    status: 'processing',
    rows: [{ raw_title: 'Pending', units: '1' }],
  });
  const data = await get('ingestionStats', [ds.rh1, ds.rh2]);
  t.same(data.statements, { total: 4, byStatus: { processed: 3, processing: 1 } });
  t.same(data.rows, { read: 8, kept: 8, removed: 0 });
  t.same(data.earnings, [
    {
      currency: 'EUR',
      rows: 4,
      royaltyEarnings: '11.750000000001',
      grossRoyaltyEarnings: '12',
      units: '111',
      royaltyEarningsUsd: '12.925',
      rowsWithoutRate: 0,
    },
    {
      currency: 'GBP',
      rows: 1,
      royaltyEarnings: '7',
      grossRoyaltyEarnings: null,
      units: '7',
      royaltyEarningsUsd: null,
      rowsWithoutRate: 1,
    },
    {
      currency: 'USD',
      rows: 3,
      royaltyEarnings: '150',
      grossRoyaltyEarnings: null,
      units: '1501',
      royaltyEarningsUsd: '150',
      rowsWithoutRate: 0,
    },
  ]);
  t.same(data.flags, {
    total: 3,
    unresolved: 2,
    byKind: [
      { kind: 'duplicate_upload', severity: 'warning', total: 1, unresolved: 0 },
      { kind: 'missing_fx_rate', severity: 'error', total: 1, unresolved: 1 },
      { kind: 'overlapping_period', severity: 'warning', total: 1, unresolved: 1 },
    ],
  });
});

t.test(
  'isReady: nothing processing, and every processed statement in the analytics data',
  async (t) => {
    t.match(await get('isReady', [ds.rh1]), {
      ready: true,
      processingStatements: 0,
      processedStatements: 2,
      analyticsStatements: 2,
      notInAnalytics: [],
    });
    const rh2 = await get('isReady', [ds.rh2]);
    t.match(
      rh2,
      { ready: false, processingStatements: 1, processedStatements: 1 },
      'a statement of RH2 is still processing',
    );
    await srv.deps.pool.query(
      `UPDATE statements SET status = 'processed', updated_at = now() WHERE rightsholder_id = $1 AND status = 'processing'`,
      [ds.rh2],
    );
    t.match(await get('isReady', [ds.rh2]), {
      ready: true,
      processingStatements: 0,
      processedStatements: 2,
      analyticsStatements: 2,
    });
    const lost = await seedStatement(srv, {
      organizationId: org,
      rightsholderId: ds.rh2,
      rows: [{ raw_title: 'Lost', units: '1' }],
    });
    const { rows } = await srv.deps.pool.query<{ normalized_key: string }>(
      'SELECT normalized_key FROM statements WHERE id = $1',
      [lost],
    );
    await srv.deps.store.delete(rows[0]!.normalized_key);
    t.match(
      await get('isReady', [ds.rh2]),
      { ready: false, processedStatements: 3, analyticsStatements: 2, notInAnalytics: [lost] },
      'its rows cannot be read',
    );
    await srv.deps.pool.query(
      `UPDATE statements SET deleted_at = now(), status = 'deleted', updated_at = now() WHERE id = $1`,
      [lost],
    );
    t.match(await get('isReady', [ds.rh2]), { ready: true });
  },
);

t.test(
  'a restricted member learns nothing of rightsholders outside their data access',
  async (t) => {
    const member = await addMember(srv, org, 'member');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, member.userId, [ds.rh2]],
    );
    t.same(
      (await get('checkEarnings', [ds.rh1, ds.rh2], member.client)).rightsholders.map(
        (r: { rightsholderId: string }) => r.rightsholderId,
      ),
      [ds.rh2],
    );
    t.same((await get('checkProducts', [ds.rh1], member.client)).rightsholders, []);
    t.same((await get('ingestionStats', [ds.rh1], member.client)).statements, {
      total: 0,
      byStatus: {},
    });
    t.match(await get('isReady', [ds.rh1], member.client), {
      rightsholderIds: [],
      processedStatements: 0,
    });
  },
);

t.test(
  'an empty rightsholderIds reports on none (the spec requires the array, not an element)',
  async (t) => {
    t.same(await get('checkEarnings', []), { rightsholders: [] });
    t.same(await get('checkProducts', []), { catalogAvailable: false, rightsholders: [] });
    t.same(await get('ingestionStats', []), {
      rightsholderIds: [],
      statements: { total: 0, byStatus: {} },
      rows: { read: 0, kept: 0, removed: 0 },
      lastProcessedAt: null,
      earnings: [],
      flags: { total: 0, unresolved: 0, byKind: [] },
    });
    t.same(await get('isReady', []), {
      ready: true,
      rightsholderIds: [],
      processingStatements: 0,
      processedStatements: 0,
      analyticsStatements: 0,
      notInAnalytics: [],
    });
  },
);

t.test('input: rightsholderIds are required uuids; GET only', async (t) => {
  t.match(await owner.client.queryUnchecked('dataFreshness.isReady', { organizationId: org }), {
    ok: false,
    error: { data: { errorCode: 'VALIDATION_FAILED', fields: [{ path: 'rightsholderIds' }] } },
  });
  t.match(
    await owner.client.query('dataFreshness.isReady', {
      organizationId: org,
      rightsholderIds: ['x'],
    }),
    {
      ok: false,
      error: { data: { errorCode: 'VALIDATION_FAILED', fields: [{ path: 'rightsholderIds.0' }] } },
    },
  );
  t.match(
    await owner.client.call('POST', 'dataFreshness.isReady', {
      organizationId: org,
      rightsholderIds: [ds.rh1],
    }),
    { ok: false, error: { data: { code: 'BAD_REQUEST', errorCode: 'METHOD_NOT_SUPPORTED' } } },
  );
});
