// musicalDetails.*: the query language, corrections with their trail (who and when) surviving
// re-fetching and reprocessing, rules scoped to a block or a rightsholder, ignored titles, and the
// distinct providers and target types; roles, data access, other tenants' ids, hostile input.
import t from 'tap';
import { OfflineProvider } from '../../../src/catalog/enrich/offline.ts';
import { drainQueue } from '../../../src/catalog/enrichQueue.ts';
import { createRightsholder } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { enrichmentDrivenServer, ingestBlock } from '../../catalog/helpers.ts';

t.setTimeout(900_000);

const srv = await enrichmentDrivenServer(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Details Org');
const org = owner.organizationId;
const rh1 = await createRightsholder(owner.client, org, 'Orla Finn');
const rh2 = await createRightsholder(owner.client, org, 'Second Artist');
const [{ block: block1 }, { block: block2 }] = await Promise.all([
  ingestBlock(srv, owner, rh1, 'a.tsv', [
    ['Orla Finn', 'Blue Hearts', 'ES-A1B-11-00343', '10'],
    ['Orla Finn', 'Crystal Hearts', '', '2.5'],
    ['Orla Finn', 'Nobody Knows This Song', '', '7.5'],
  ]),
  ingestBlock(srv, owner, rh2, 'b.tsv', [['Second Artist', '100% Pure', 'USRC19900001', '1.25']]),
]);
await drainQueue(srv.deps, new OfflineProvider());

const foreign = await newOrganization(srv, 'Foreign Org');
const foreignRh = await createRightsholder(
  foreign.client,
  foreign.organizationId,
  'Foreign Artist',
);
const { block: foreignBlock } = await ingestBlock(srv, foreign, foreignRh, 'f.tsv', [
  ['Foreign Artist', 'Blue Hearts', 'USRC19900002', '3'],
]);
const foreignMd = (
  await db.query('SELECT id FROM musical_details WHERE block_id = $1', [foreignBlock])
).rows[0].id as string;

const writer = await addMember(srv, org, 'writer');
const restrictedAdmin = await addMember(srv, org, 'admin');
await db.query(
  `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
  [org, restrictedAdmin.userId, [rh2]],
);

const ids = Object.fromEntries(
  (
    await db.query<{ title: string; id: string }>(
      'SELECT title, id FROM musical_details WHERE organization_id = $1',
      [org],
    )
  ).rows.map((r) => [r.title, r.id]),
);

async function find(query: unknown, extra: Record<string, unknown> = {}, client = owner.client) {
  const res = await client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query,
    ...extra,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}
const titles = (data: { data: { title: string }[] }) => data.data.map((m) => m.title);

t.test('getMusicalDetails: records, order and pagination', async (t) => {
  const all = await find({});
  t.same(
    titles(all),
    ['Blue Hearts', 'Nobody Knows This Song', 'Crystal Hearts', '100% Pure'],
    'highest USD earnings first',
  );
  t.same(all.pagination, {
    page: 1,
    limit: 100,
    total: 4,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const blue = all.data[0];
  t.match(blue, {
    id: ids['Blue Hearts'],
    blockId: block1,
    rightsholderId: rh1,
    identityKey: 'isrc:ESA1B1100343',
    isrc: 'ESA1B1100343',
    artist: 'Orla Finn',
    rowCount: 1,
    earningsUsd: '10',
    state: 'found',
    provider: 'offline',
    providerId: '87131117-84ba-5d8f-b753-103292177d54',
    ignored: false,
    effective: {
      title: 'Blue Hearts',
      artist: 'Orla Finn',
      releaseDate: '2011-01-29',
      albums: ['Burning Horizon'],
      genres: ['folk', 'singer-songwriter'],
    },
    overriddenFields: [],
  });
  t.same(blue.variants, [
    {
      isrc: 'ES-A1B-11-00343',
      title: 'Blue Hearts',
      artist: 'Orla Finn',
      releaseTitle: null,
      releaseArtist: null,
      rowCount: 1,
      earningsUsd: '10',
    },
  ]);
  t.notOk('trail' in blue, 'no trail unless asked');
  const page2 = await find({}, { pagination: { page: 2, pageSize: 1 } });
  t.same(titles(page2), ['Nobody Knows This Song']);
  t.same(page2.pagination, {
    page: 2,
    limit: 1,
    total: 4,
    totalPages: 4,
    hasNext: true,
    hasPrev: true,
  });
});

t.test('the query language', async (t) => {
  t.same(titles(await find({ title: { contains: 'HEARTS' } })), ['Blue Hearts', 'Crystal Hearts']);
  t.same(
    titles(await find({ isrc: { equals: 'esa1b11-00343' } })),
    ['Blue Hearts'],
    'ISRC compared without separators',
  );
  t.same(titles(await find({ state: { in: ['not_found'] } })), [
    'Nobody Knows This Song',
    '100% Pure',
  ]);
  t.same(titles(await find({ provider: { in: ['offline'] }, earnings: { gte: '7.5', lte: 10 } })), [
    'Blue Hearts',
    'Nobody Knows This Song',
  ]);
  t.same(
    titles(
      await find({
        or: [
          { artist: { equals: 'second artist' } },
          { and: [{ title: { contains: 'crystal' } }, { earnings: { lte: '3' } }] },
        ],
      }),
    ),
    ['Crystal Hearts', '100% Pure'],
  );
  t.same(titles(await find({ not: { title: { contains: 'hearts' } } })), [
    'Nobody Knows This Song',
    '100% Pure',
  ]);
  t.same(titles(await find({ rightsholderId: { in: [rh2] } })), ['100% Pure']);
  t.same(
    titles(await find({ title: { contains: '100%' } })),
    ['100% Pure'],
    '% is matched literally',
  );
  t.same(titles(await find({ title: { contains: '%' } })), ['100% Pure']);
  t.same(
    titles(await find({ title: { contains: "x' OR '1'='1" } })),
    [],
    'SQL in strings is a value',
  );
  t.same(
    titles(await find({ blockId: { in: [foreignBlock] } })),
    [],
    "another tenant's block holds nothing for us",
  );
  const exec = await owner.client.query('musicalDetails.executeQuery', {
    organizationId: org,
    query: { title: { contains: 'hearts' } },
  });
  t.same(exec.data, {
    total: 2,
    earningsUsd: '12.5',
    byState: { found: 2 },
    musicalDetailIds: [ids['Blue Hearts'], ids['Crystal Hearts']],
    truncated: false,
  });
});

t.test('invalid queries are CATALOG_QUERY_INVALID with the paths', async (t) => {
  for (const query of [
    { title: { like: 'x' } },
    { color: { equals: 'red' } },
    { state: { in: ['done'] } },
    { earnings: { gte: '1e999' } },
    { and: 'x' },
    [1, 2],
    'title',
  ]) {
    const res = await owner.client.query('musicalDetails.getMusicalDetails', {
      organizationId: org,
      query,
    });
    t.match(
      res.error?.data,
      { code: 'BAD_REQUEST', errorCode: 'CATALOG_QUERY_INVALID' },
      JSON.stringify(query),
    );
  }
  let deep: unknown = { title: { contains: 'x' } };
  for (let i = 0; i < 8; i++) deep = { and: [deep] };
  const res = await owner.client.query('musicalDetails.executeQuery', {
    organizationId: org,
    query: deep,
  });
  t.match(res.error?.data, { code: 'BAD_REQUEST', errorCode: 'CATALOG_QUERY_INVALID' });
  const huge = await owner.client.mutate('musicalDetails.bulkOverride', {
    organizationId: org,
    blockId: block1,
    overrides: [{ query: { title: { contains: 'x'.repeat(60_000) } }, values: { title: 'y' } }],
  });
  t.match(huge.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
});

t.test('updateResults: an override with who and when, kept through re-fetching', async (t) => {
  const res = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts']],
    overrideValues: {
      title: 'Blue Hearts (2011 Mix)',
      artist: 'Orla Finn',
      releaseDate: '2011-02-01',
      genres: ['folk'],
      imageUrl: '',
    },
  });
  t.ok(res.ok, JSON.stringify(res.error));
  t.match(res.data.data[0], {
    effective: {
      title: 'Blue Hearts (2011 Mix)',
      artist: 'Orla Finn',
      releaseDate: '2011-02-01',
      genres: ['folk'],
      imageUrl: null,
      albums: ['Burning Horizon'],
    },
    overriddenFields: ['title', 'artist', 'releaseDate', 'imageUrl', 'genres'],
  });
  await owner.client.mutate('fetching.refetchByBlock', { organizationId: org, blockId: block1 });
  await drainQueue(srv.deps, new OfflineProvider());
  const after = await find({ id: { in: [ids['Blue Hearts']] } }, { includeTrail: true });
  t.match(after.data[0], {
    state: 'found',
    result: { title: 'Blue Hearts' },
    effective: { title: 'Blue Hearts (2011 Mix)', releaseDate: '2011-02-01' },
  });
  t.match(after.data[0].trail, [
    {
      kind: 'update_results',
      ruleId: null,
      createdBy: owner.userId,
      createdAt: /^\d{4}-\d\d-\d\dT/,
      values: { title: 'Blue Hearts (2011 Mix)', imageUrl: null },
    },
  ]);
  const activity = await db.query(
    `SELECT subject_type, subject_id, actor_user_id, rightsholder_ids FROM activity_events WHERE action = 'musicalDetails.updateResults'`,
  );
  t.same(
    activity.rows,
    [
      {
        subject_type: 'product',
        subject_id: ids['Blue Hearts'],
        actor_user_id: owner.userId,
        rightsholder_ids: [rh1],
      },
    ],
    "about the block's rightsholder",
  );
  // so a member restricted to that rightsholder sees it in the feed (it had no rightsholder: unrestricted members only)
  const limited = await addMember(srv, org, 'reader');
  await db.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, limited.userId, [rh1]],
  );
  const feed = await limited.client.query('activity.feed', { organizationId: org });
  t.ok(feed.ok, JSON.stringify(feed.error));
  t.ok(
    JSON.stringify(feed.data).includes('musicalDetails.updateResults'),
    "in the feed of a member restricted to the block's rightsholder",
  );
  const other = await restrictedAdmin.client.query('activity.feed', { organizationId: org });
  t.notOk(
    JSON.stringify(other.data).includes('musicalDetails.updateResults'),
    'not in the feed of one restricted to another rightsholder',
  );
});

t.test('updateResults: roles, other tenants, missing fields', async (t) => {
  const values = { title: 'X', artist: 'Y', releaseDate: '2020' };
  const byWriter = await writer.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts']],
    overrideValues: values,
  });
  t.match(byWriter.error?.data, { code: 'FORBIDDEN', errorCode: 'INSUFFICIENT_ROLE' });
  const foreignId = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts'], foreignMd],
    overrideValues: values,
  });
  t.match(foreignId.error?.data, { code: 'NOT_FOUND', errorCode: 'MUSICAL_DETAIL_NOT_FOUND' });
  const hidden = await restrictedAdmin.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts']],
    overrideValues: values,
  });
  t.match(
    hidden.error?.data,
    { code: 'NOT_FOUND', errorCode: 'MUSICAL_DETAIL_NOT_FOUND' },
    'outside the data access is not found',
  );
  const missing = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts']],
    overrideValues: { title: 'X' },
  });
  t.match(missing.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  const badDate = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts']],
    overrideValues: { ...values, releaseDate: "2020'; DROP TABLE musical_details; --" },
  });
  t.match(badDate.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  // impossible days and links a browser would run are input errors too, here and in bulk overrides
  for (const bad of [
    { releaseDate: '2011-13-45' },
    { releaseDate: '2023-02-29' },
    { imageUrl: 'javascript:alert(1)' },
    { imageUrl: 'data:text/html,<script>alert(1)</script>' },
    { imageUrl: 'ftp://example.com/x.png' },
  ]) {
    const res = await owner.client.mutate('musicalDetails.updateResults', {
      organizationId: org,
      resultIds: [ids['Blue Hearts']],
      overrideValues: { ...values, ...bad },
    });
    t.match(
      res.error?.data,
      { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' },
      JSON.stringify(bad),
    );
    const bulk = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      blockId: block1,
      overrides: [{ query: { title: { contains: 'Blue' } }, values: bad }],
    });
    t.match(
      bulk.error?.data,
      { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' },
      `bulk ${JSON.stringify(bad)}`,
    );
  }
  t.equal(
    (
      await db.query(
        `SELECT count(*)::int AS n FROM musical_detail_overrides WHERE organization_id = $1`,
        [org],
      )
    ).rows[0].n,
    1,
    'nothing was written',
  );
});

t.test(
  'bulkOverride: by ids, and rules by block and by rightsholder that reach later details',
  async (t) => {
    const byIds = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      overrides: [{ musicalDetailIds: [ids['100% Pure']], values: { genres: ['pop'] } }],
    });
    t.same(byIds.data, { overrides: 1, rules: [], musicalDetailIds: [ids['100% Pure']] });
    const rule = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      blockId: block1,
      overrides: [
        { query: { title: { contains: 'hearts' } }, values: { artist: 'Orla Finn & Friends' } },
        {
          query: { state: { in: ['not_found'] } },
          scope: 'rightsholder',
          values: { releaseDate: '1999-01-01' },
        },
      ],
    });
    t.ok(rule.ok, JSON.stringify(rule.error));
    t.equal(rule.data.overrides, 3);
    t.equal(rule.data.rules.length, 2);
    t.same(titles(await find({}, { hasBlockRule: true })), ['Blue Hearts', 'Crystal Hearts']);
    t.same(titles(await find({}, { hasRightsholderRule: true })), ['Nobody Knows This Song']);
    const crystal = await find({ title: { equals: 'crystal hearts' } }, { includeTrail: true });
    t.match(crystal.data[0], {
      effective: { artist: 'Orla Finn & Friends' },
      trail: [{ kind: 'rule', ruleId: rule.data.rules[0], createdBy: owner.userId }],
    });
    // a later statement brings a detail the block rule matches: the rule reaches it
    await ingestBlock(srv, owner, rh1, 'c.tsv', [['Orla Finn', 'Burning Hearts', '', '1']], 2);
    t.same(titles(await find({}, { hasBlockRule: true })), [
      'Blue Hearts',
      'Crystal Hearts',
      'Burning Hearts',
    ]);
    const noBlock = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      overrides: [{ query: {}, values: { title: 'x' } }],
    });
    t.match(noBlock.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    const foreignBlockRule = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      blockId: foreignBlock,
      overrides: [{ query: {}, values: { title: 'x' } }],
    });
    t.match(foreignBlockRule.error?.data, { code: 'NOT_FOUND', errorCode: 'BLOCK_NOT_FOUND' });
    const both = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      blockId: block1,
      overrides: [{ query: {}, musicalDetailIds: [ids['Blue Hearts']], values: { title: 'x' } }],
    });
    t.match(both.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    const empty = await owner.client.mutate('musicalDetails.bulkOverride', {
      organizationId: org,
      blockId: block1,
      overrides: [{ query: {}, values: {} }],
    });
    t.match(empty.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  },
);

t.test('ignoreTitles: organization-wide, normalized, idempotent', async (t) => {
  const first = await owner.client.mutate('musicalDetails.ignoreTitles', {
    organizationId: org,
    titles: ['NOBODY knows this song', 'Nobody Knows This Song!', 'Never Seen'],
  });
  t.same(first.data, {
    titles: [
      { title: 'NOBODY knows this song', normalizedTitle: 'nobody knows this song', created: true },
      { title: 'Never Seen', normalizedTitle: 'never seen', created: true },
    ],
    musicalDetails: 1,
  });
  const again = await owner.client.mutate('musicalDetails.ignoreTitles', {
    organizationId: org,
    titles: ['nobody knows this song'],
  });
  t.same(again.data, {
    titles: [
      {
        title: 'nobody knows this song',
        normalizedTitle: 'nobody knows this song',
        created: false,
      },
    ],
    musicalDetails: 0,
  });
  t.same(titles(await find({ ignored: { equals: true } })), ['Nobody Knows This Song']);
  const foreignSide = await db.query(
    `SELECT count(*)::int AS n FROM musical_details WHERE organization_id = $1 AND ignored`,
    [foreign.organizationId],
  );
  t.equal(foreignSide.rows[0].n, 0, 'other organizations are not touched');
  const restricted = await restrictedAdmin.client.mutate('musicalDetails.ignoreTitles', {
    organizationId: org,
    titles: ['Blue Hearts'],
  });
  t.match(
    restricted,
    { ok: false, error: { data: { code: 'FORBIDDEN', errorCode: 'DATA_ACCESS_RESTRICTED' } } },
    'not for a member who sees only some rightsholders',
  );
  t.equal(
    (
      await db.query(
        `SELECT count(*)::int AS n FROM ignored_titles WHERE organization_id = $1 AND normalized_title = 'blue hearts'`,
        [org],
      )
    ).rows[0].n,
    0,
  );
  const blank = await owner.client.mutate('musicalDetails.ignoreTitles', {
    organizationId: org,
    titles: ['!!!'],
  });
  t.match(blank.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
});

t.test('distinct providers and target types', async (t) => {
  const providers = await owner.client.query('musicalDetails.getDistinctTargetProviders', {
    organizationId: org,
  });
  t.same(providers.data, {
    configured: 'offline',
    providers: [{ provider: 'offline', musicalDetails: 4, found: 2, notFound: 2, failed: 0 }],
  });
  const one = await owner.client.query('musicalDetails.getDistinctTargetProviders', {
    organizationId: org,
    blockId: block2,
  });
  t.same(one.data.providers, [
    { provider: 'offline', musicalDetails: 1, found: 0, notFound: 1, failed: 0 },
  ]);
  const types = await owner.client.query('musicalDetails.getDistinctTargetTypes', {
    organizationId: org,
    blockId: block1,
  });
  t.ok(types.ok);
  t.same(
    types.data.types.map((x: { type: string }) => x.type),
    ['track', 'album'],
  );
  const foreignTypes = await owner.client.query('musicalDetails.getDistinctTargetTypes', {
    organizationId: org,
    blockId: foreignBlock,
  });
  t.match(foreignTypes.error?.data, { code: 'NOT_FOUND', errorCode: 'BLOCK_NOT_FOUND' });
});

t.test('data access and roles for reads', async (t) => {
  t.same(titles(await find({}, {}, restrictedAdmin.client)), ['100% Pure']);
  const byWriter = await writer.client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: {},
  });
  t.match(byWriter.error?.data, { code: 'FORBIDDEN', errorCode: 'INSUFFICIENT_ROLE' });
  const tooBig = await owner.client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: {},
    pagination: { page: 1, pageSize: 2001 },
  });
  t.match(tooBig.error?.data, { code: 'BAD_REQUEST', errorCode: 'PAGINATION_LIMIT_EXCEEDED' });
  const atMost = await owner.client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: {},
    pagination: { page: 1, pageSize: 2000 },
  });
  t.equal(atMost.ok && atMost.data.pagination.limit, 2000);
  const zero = await owner.client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: {},
    pagination: { page: 1, pageSize: 0 },
  });
  t.match(zero.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
});

t.test('one id written in two cases is one detail', async (t) => {
  const twice = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [ids['Blue Hearts'], ids['Blue Hearts']!.toUpperCase()],
    overrideValues: { title: 'Blue Hearts', artist: 'Orla Finn', releaseDate: '2020-02-29' },
  });
  t.equal(twice.ok && twice.data.data.length, 1);
  t.match(twice.ok && twice.data.data[0], {
    id: ids['Blue Hearts'],
    effective: { releaseDate: '2020-02-29' },
  });
});

t.test(
  'updateResults: an empty title clears the title correction, back to the fetched or raw title',
  async (t) => {
    const correct = (title: string) =>
      owner.client.mutate('musicalDetails.updateResults', {
        organizationId: org,
        resultIds: [ids['Blue Hearts'], ids['Nobody Knows This Song']],
        overrideValues: { title, artist: 'Orla Finn', releaseDate: '2011' },
      });
    const effectiveTitles = (res: any) =>
      res.data.data.map((m: any) => [m.title, m.result?.title ?? null, m.effective.title]);
    t.same(effectiveTitles(await correct('Corrected')), [
      ['Blue Hearts', 'Blue Hearts', 'Corrected'],
      ['Nobody Knows This Song', null, 'Corrected'],
    ]);
    t.same(
      effectiveTitles(await correct('')),
      [
        ['Blue Hearts', 'Blue Hearts', 'Blue Hearts'],
        ['Nobody Knows This Song', null, 'Nobody Knows This Song'],
      ],
      'the fetched title where there is one, else the raw one; never an empty title',
    );
    const clusters = await owner.client.query('clustering.getClustersList', {
      organizationId: org,
      blockId: block1,
    });
    const cluster = clusters.data.data.find(
      (c: any) => c.displayTitle === 'Nobody Knows This Song',
    );
    const entries = await owner.client.query('clustering.getCluster', {
      organizationId: org,
      blockId: block1,
      clusterId: cluster.id,
    });
    t.same(
      entries.data.musicalDetails.map((e: any) => [e.title, e.rawTitle]),
      [['Nobody Knows This Song', 'Nobody Knows This Song']],
    );
  },
);
