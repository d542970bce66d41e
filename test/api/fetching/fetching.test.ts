// fetching.*: coverage per rightsholder (exact shares of details and USD earnings), the queue
// count, the operators' list, and the block actions (stop, re-fetch, reprocess skipped), through
// the procedures at the handler, with roles, data access, other tenants' ids and hostile input.
import t from 'tap';
import { OfflineProvider } from '../../../src/catalog/enrich/offline.ts';
import { drainQueue } from '../../../src/catalog/enrichQueue.ts';
import { createRightsholder } from '../../helpers/ingest.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { enrichmentDrivenHandler, ingestBlock } from '../../catalog/helpers.ts';

t.setTimeout(900_000);

// ingestion and block refreshes run in the job runner; enrichment is driven by the test
const srv = await enrichmentDrivenHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Fetching Org');
const org = owner.organizationId;
const rh1 = await createRightsholder(owner.client, org, 'Orla Finn');
const rh2 = await createRightsholder(owner.client, org, 'Second Artist');
const [{ block: block1 }, { block: block2 }] = await Promise.all([
  ingestBlock(srv, owner, rh1, 'a.tsv', [
    ['Orla Finn', 'Blue Hearts', 'ESA1B1100343', '10'],
    ['Orla Finn', 'Crystal Hearts', '', '2.5'],
    ['Orla Finn', 'Nobody Knows This Song', '', '7.5'],
  ]),
  ingestBlock(srv, owner, rh2, 'b.tsv', [['Second Artist', 'Song X', 'USRC19900001', '1.25']]),
]);

const foreign = await newOrganization(srv, 'Foreign Org');
const foreignRh = await createRightsholder(
  foreign.client,
  foreign.organizationId,
  'Foreign Artist',
);
const { block: foreignBlock } = await ingestBlock(srv, foreign, foreignRh, 'f.tsv', [
  ['Foreign Artist', 'Elsewhere', 'USRC19900002', '3'],
]);

const writer = await addMember(srv, org, 'writer');
const member = await addMember(srv, org, 'member');
const restricted = await addMember(srv, org, 'member');
await db.query(
  `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
  [org, restricted.userId, [rh2]],
);
const unknown = '00000000-0000-4000-8000-000000000000';

async function coverage(client = owner.client, ids = [rh1, rh2, foreignRh, unknown]) {
  const res = await client.query('fetching.getFetchingCoverageByRightsholders', {
    organizationId: org,
    rightsholderIds: ids,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.rightsholders.map((r: Record<string, unknown>) => [
    r.rightsholderName,
    r.blockId,
    r.musicalDetails,
    r.resolved,
    r.resolvedPercentage,
    r.earningsUsd,
    r.resolvedEarningsUsd,
    r.resolvedEarningsPercentage,
  ]);
}

t.test('coverage and queue count before anything is fetched', async (t) => {
  t.same(
    await coverage(),
    [
      ['Orla Finn', block1, 3, 0, '0', '20', '0', '0'],
      ['Second Artist', block2, 1, 0, '0', '1.25', '0', '0'],
    ],
    'other tenants and unknown ids are left out',
  );
  const count = await member.client.query('fetching.inQueueCount', { organizationId: org });
  t.same(count.data, { count: 4, pending: 4, fetching: 0 });
  const full = await owner.client.query('fetching.getFetchingCoverageByRightsholders', {
    organizationId: org,
    rightsholderIds: [rh1],
  });
  t.same(full.data.rightsholders[0].byState, {
    pending: 3,
    fetching: 0,
    found: 0,
    not_found: 0,
    skipped: 0,
    failed: 0,
  });
});

t.test(
  'an ignored title is resolved (skipped): shares of details and of USD earnings',
  async (t) => {
    const res = await owner.client.mutate('musicalDetails.ignoreTitles', {
      organizationId: org,
      titles: ['CRYSTAL hearts!'],
    });
    t.ok(res.ok, JSON.stringify(res.error));
    t.same(await coverage(owner.client, [rh1]), [
      ['Orla Finn', block1, 3, 1, '33.3333', '20', '2.5', '12.5'],
    ]);
  },
);

t.test('data access: a restricted member sees only their rightsholders', async (t) => {
  t.same(await coverage(restricted.client), [
    ['Second Artist', block2, 1, 0, '0', '1.25', '0', '0'],
  ]);
  t.same((await restricted.client.query('fetching.inQueueCount', { organizationId: org })).data, {
    count: 1,
    pending: 1,
    fetching: 0,
  });
});

t.test('stopFetchingByBlock: writer role, visible blocks only', async (t) => {
  const denied = await member.client.mutate('fetching.stopFetchingByBlock', {
    organizationId: org,
    blockId: block2,
  });
  t.match(denied.error?.data, { code: 'FORBIDDEN', errorCode: 'INSUFFICIENT_ROLE' });
  const foreignId = await owner.client.mutate('fetching.stopFetchingByBlock', {
    organizationId: org,
    blockId: foreignBlock,
  });
  t.match(foreignId.error?.data, { code: 'NOT_FOUND', errorCode: 'BLOCK_NOT_FOUND' });
  t.equal(foreignId.error?.code, -32004);
  const bad = await owner.client.mutate('fetching.stopFetchingByBlock', {
    organizationId: org,
    blockId: "1' OR '1'='1",
  });
  t.match(bad.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  const stopped = await writer.client.mutate('fetching.stopFetchingByBlock', {
    organizationId: org,
    blockId: block2,
  });
  t.same(stopped.data, { blockId: block2, musicalDetails: 1 });
  t.same((await owner.client.query('fetching.inQueueCount', { organizationId: org })).data, {
    count: 2,
    pending: 2,
    fetching: 0,
  });
  const activity = await db.query(
    `SELECT action, subject_type, subject_id, actor_user_id FROM activity_events WHERE action = 'fetching.stopFetchingByBlock'`,
  );
  t.same(activity.rows, [
    {
      action: 'fetching.stopFetchingByBlock',
      subject_type: 'rightsholder',
      subject_id: rh2,
      actor_user_id: writer.userId,
    },
  ]);
});

t.test('the queue drains to terminal states; coverage is complete', async (t) => {
  await drainQueue(srv.deps, new OfflineProvider());
  t.same(await coverage(), [
    ['Orla Finn', block1, 3, 3, '100', '20', '20', '100'],
    ['Second Artist', block2, 1, 1, '100', '1.25', '1.25', '100'],
  ]);
  const states = await db.query(
    `SELECT title, state FROM musical_details WHERE block_id = $1 ORDER BY title`,
    [block1],
  );
  t.same(states.rows, [
    { title: 'Blue Hearts', state: 'found' },
    { title: 'Crystal Hearts', state: 'skipped' },
    { title: 'Nobody Knows This Song', state: 'not_found' },
  ]);
});

t.test('refetchByBlock and reprocessSkippedByBlock', async (t) => {
  const refetch = await writer.client.mutate('fetching.refetchByBlock', {
    organizationId: org,
    blockId: block1,
  });
  t.same(
    refetch.data,
    { blockId: block1, musicalDetails: 2 },
    'found and not found go back; the ignored title stays skipped',
  );
  t.same((await owner.client.query('fetching.inQueueCount', { organizationId: org })).data, {
    count: 2,
    pending: 2,
    fetching: 0,
  });
  const skipped1 = await writer.client.mutate('fetching.reprocessSkippedByBlock', {
    organizationId: org,
    blockId: block1,
  });
  t.same(skipped1.data, { blockId: block1, musicalDetails: 0 });
  const skipped2 = await writer.client.mutate('fetching.reprocessSkippedByBlock', {
    organizationId: org,
    blockId: block2,
  });
  t.same(skipped2.data, { blockId: block2, musicalDetails: 1 });
  const hidden = await restricted.client.mutate('fetching.refetchByBlock', {
    organizationId: org,
    blockId: block1,
  });
  t.match(hidden.error?.data, { code: 'FORBIDDEN' }, 'a member may not act at all');
  const queued = await db.query(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'catalog_enrich'`,
  );
  t.equal(queued.rows[0].n, 1, 'the enrichment queue was woken, once');
  await drainQueue(srv.deps, new OfflineProvider());
  t.same((await owner.client.query('fetching.inQueueCount', { organizationId: org })).data, {
    count: 0,
    pending: 0,
    fetching: 0,
  });
});

t.test('fetching.list: platform operators, across organizations or one, searchable', async (t) => {
  const operator = await outsider(srv, org, 'c2_superadmin');
  const all = await operator.client.query('fetching.list', {});
  t.ok(all.ok, JSON.stringify(all.error));
  t.same(all.data.pagination, {
    page: 1,
    limit: 10,
    total: 3,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.same(
    all.data.data
      .map((b: Record<string, unknown>) => [
        b.organizationName,
        b.rightsholderName,
        b.musicalDetails,
      ])
      .sort(),
    [
      ['Fetching Org', 'Orla Finn', 3],
      ['Fetching Org', 'Second Artist', 1],
      ['Foreign Org', 'Foreign Artist', 1],
    ],
  );
  const foreignRow = all.data.data.find((b: Record<string, unknown>) => b.blockId === foreignBlock);
  t.same(
    foreignRow.byState,
    { pending: 0, fetching: 0, found: 0, not_found: 1, skipped: 0, failed: 0 },
    'the queue is one for all organizations',
  );
  const one = await operator.client.query('fetching.list', {
    organizationId: org,
    search: 'second',
    pagination: { page: 1 },
  });
  t.same(
    one.data.data.map((b: Record<string, unknown>) => b.blockId),
    [block2],
  );
  t.equal(one.data.pagination.limit, 10, 'inner default limit 10');
  const hostile = await operator.client.query('fetching.list', { search: "%' OR 1=1 --" });
  t.same(hostile.data.data, []);
  const denied = await owner.client.query('fetching.list', { organizationId: org });
  t.match(denied.error?.data, { code: 'FORBIDDEN', errorCode: 'PLATFORM_ROLE_REQUIRED' });
  const tooMany = await operator.client.query('fetching.list', {
    pagination: { page: 1, limit: 2001 },
  });
  t.match(tooMany.error?.data, { code: 'BAD_REQUEST', errorCode: 'PAGINATION_LIMIT_EXCEEDED' });
  const byName = await operator.client.query('fetching.list', {
    pagination: { sortBy: 'rightsholderName', sortOrder: 'desc' },
  });
  t.same(
    byName.data.data.map((b: Record<string, unknown>) => b.rightsholderName),
    ['Second Artist', 'Orla Finn', 'Foreign Artist'],
  );
  t.equal(byName.data.pagination.limit, 10);
  const unknown = await operator.client.query('fetching.list', {
    pagination: { sortBy: 'password' },
  });
  t.match(unknown.error, {
    message:
      'Invalid input: pagination.sortBy: sortBy must be one of: organizationName, rightsholderName, blockState, refreshedAt, musicalDetails, nextAttemptAt',
    data: { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' },
  });
});

t.test('hostile and oversized input', async (t) => {
  const res = await owner.client.query('fetching.getFetchingCoverageByRightsholders', {
    organizationId: org,
    rightsholderIds: [rh1, "x' OR 1=1"],
  });
  t.match(res.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  t.match(res.error?.data.fields, [{ path: 'rightsholderIds.1' }]);
  const other = await owner.client.query('fetching.inQueueCount', {
    organizationId: foreign.organizationId,
  });
  t.match(other.error?.data, { code: 'BAD_REQUEST' }, 'another organization than the header');
});
