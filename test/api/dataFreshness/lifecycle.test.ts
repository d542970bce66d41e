// dataFreshness, insights and cube.sqlQuery over a statement ingested through the real API, then
// reprocessed, deleted and restored: every answer follows the statement, money to the last decimal.
import path from 'node:path';
import t, { type Test } from 'tap';
import { createRightsholder, uploadFixture, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';
import type { QueryPath } from '../../helpers/procedures.ts';

const srv = await startTestHandler(t, { jobs: true, env: { CUBE_ASYNC_WAIT_MS: '2000' } });
const owner = await newOrganization(srv, 'Lifecycle Org');
const org = owner.organizationId;
const rh = await createRightsholder(owner.client, org, 'Lifecycle Artist');
// 30 rows, USD, March 2024, net earnings 671.485988032740 (fixtures/statements/distrokid-legacy.tsv.expected.json)
const up = await uploadFixture(
  owner.client,
  org,
  rh,
  path.resolve('fixtures/statements/distrokid-legacy.tsv'),
);
t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');

async function get(procedure: QueryPath) {
  // loosely typed: the answer's shape depends on the procedure
  const res: Outcome<any> = await owner.client.query(procedure, {
    organizationId: org,
    rightsholderIds: [rh],
  });
  if (!res.ok) throw new Error(`${procedure}: ${JSON.stringify(res.error)}`);
  return res.data;
}

const SQL =
  'SELECT count(*), sum(royalty_earnings), sum(royalty_earnings_usd), sum(units) FROM analytics_full_view';
async function sqlRows() {
  const res: Outcome<any> = await owner.client.mutate('cube.sqlQuery', {
    organizationId: org,
    sql: SQL,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.rows;
}
const ALL = [['30', '671.485988032740', '671.4859880326', '8222039.000000000000']];
const NONE = [['0', null, null, null]];

async function action(type: 'reprocess' | 'delete' | 'restore') {
  const res = await owner.client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type, statementId: up.statementId },
  });
  if (!res.ok) throw new Error(`${type}: ${JSON.stringify(res.error)}`);
  return waitForStatement(owner.client, org, up.statementId);
}

async function expectPresent(t: Test, when: string) {
  t.same(await sqlRows(), ALL, `${when}: sqlQuery sums the 30 rows once`);
  const stats = await get('dataFreshness.ingestionStats');
  t.same(stats.statements, { total: 1, byStatus: { processed: 1 } }, when);
  t.same(stats.rows, { read: 30, kept: 30, removed: 0 }, when);
  t.same(
    stats.earnings,
    [
      {
        currency: 'USD',
        rows: 30,
        royaltyEarnings: '671.48598803274',
        grossRoyaltyEarnings: null,
        units: '8222039',
        royaltyEarningsUsd: '671.4859880327',
        rowsWithoutRate: 0,
      },
    ],
    when,
  );
  t.match(
    (await get('dataFreshness.checkEarnings')).rightsholders,
    [
      {
        latestPeriod: '2024M03',
        latestPeriodEnd: '2024-03-31',
        latestStatementId: up.statementId,
        statementCount: 1,
      },
    ],
    when,
  );
  t.match(
    await get('dataFreshness.isReady'),
    { ready: true, processedStatements: 1, analyticsStatements: 1, notInAnalytics: [] },
    when,
  );
  t.same(
    await get('insights.getDefaultFxDate'),
    { date: '2024-03-31', rightsholderIds: [rh] },
    when,
  );
  t.same(
    await get('insights.getDefaultFxRates'),
    {
      date: '2024-03-31',
      base: 'USD',
      rates: [{ currency: 'USD', rate: '1', rateDate: '2024-03-31' }],
      missing: [],
      rightsholderIds: [rh],
    },
    when,
  );
}

t.test('ingested, then reprocessed: the same answers, nothing counted twice', async (t) => {
  await expectPresent(t, 'ingested');
  t.equal((await action('reprocess')).status, 'processed');
  await expectPresent(t, 'reprocessed');
  const body = { organizationId: org, sql: SQL };
  // the reprocess changed the catalog too (its block refresh may still be running): the async
  // call answers at once or says processing, and the poll with the same body then answers
  let answer = (await owner.client.mutate('cube.sqlQueryAsync', body)).data;
  for (let i = 0; answer.status === 'processing' && i < 600; i++) {
    await new Promise((r) => setTimeout(r, 100));
    answer = (await owner.client.mutate('cube.sqlQueryPoll', body)).data;
  }
  t.same(answer, {
    status: 'completed',
    data: { schema: (await owner.client.mutate('cube.sqlQuery', body)).data.schema, rows: ALL },
  });
});

t.test('deleted: no statement, no rows, no period; restored: all back', async (t) => {
  const body = { organizationId: org, sql: SQL };
  t.equal((await action('delete')).status, 'deleted');
  t.same(await sqlRows(), NONE);
  // the delete also refreshes the catalog, which analytics reads: the poll may say processing first
  let polled = (await owner.client.mutate('cube.sqlQueryPoll', body)).data;
  for (let i = 0; polled.status === 'processing' && i < 600; i++) {
    await new Promise((r) => setTimeout(r, 100));
    polled = (await owner.client.mutate('cube.sqlQueryPoll', body)).data;
  }
  t.same(polled?.data?.rows, NONE, 'a poll after the change answers the new data');
  t.same(await get('dataFreshness.ingestionStats'), {
    rightsholderIds: [rh],
    statements: { total: 0, byStatus: {} },
    rows: { read: 0, kept: 0, removed: 0 },
    lastProcessedAt: null,
    earnings: [],
    flags: { total: 0, unresolved: 0, byKind: [] },
  });
  t.match((await get('dataFreshness.checkEarnings')).rightsholders, [
    { latestPeriod: null, latestStatementId: null, statementCount: 0, distributors: [] },
  ]);
  t.same(await get('dataFreshness.isReady'), {
    ready: true,
    rightsholderIds: [rh],
    processingStatements: 0,
    processedStatements: 0,
    analyticsStatements: 0,
    notInAnalytics: [],
  });
  t.same(await get('insights.getDefaultFxDate'), { date: null, rightsholderIds: [rh] });
  t.equal((await action('restore')).status, 'processed');
  await expectPresent(t, 'restored');
});
