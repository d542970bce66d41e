// lookupSalesType.*: entries keyed by the normalized original, the taxonomy check, the missing
// report over ingested raw values, built-in resolution with and without saving, and the platform
// role on every procedure.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data, reportRawValue } from '../../lookups/helpers.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Sales Type Org');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;
const db = srv.deps.pool;

t.test('every procedure needs a platform operator', async (t) => {
  const calls: [string, 'GET' | 'POST', unknown][] = [
    ['lookupSalesType.batchResolveWithAI', 'POST', { salesTypes: ['Streams'] }],
    ['lookupSalesType.create', 'POST', { original: 'x', cleansed: 'x' }],
    ['lookupSalesType.delete', 'POST', { id: randomUUID() }],
    ['lookupSalesType.getSalesTypeLookup', 'GET', { original: 'Streaming' }],
    ['lookupSalesType.list', 'GET', {}],
    ['lookupSalesType.missingSalesTypes', 'GET', {}],
    ['lookupSalesType.resolveWithAI', 'POST', { original: 'Streams' }],
    ['lookupSalesType.update', 'POST', { id: randomUUID() }],
  ];
  const admin = await addMember(srv, owner.organizationId, 'admin');
  const support = await addMember(srv, owner.organizationId, 'admin', {
    platformRole: 'c2_customer_support',
  });
  for (const [path, method, input] of calls) {
    for (const caller of [owner, admin, support])
      isError(
        t,
        await caller.client.call(method, path, input),
        'FORBIDDEN',
        'PLATFORM_ROLE_REQUIRED',
      );
    isError(t, await srv.anonymous.call(method, path, input), 'UNAUTHORIZED', 'AUTH_REQUIRED');
  }
});

t.test('the shipped taxonomy and common sales types are there', async (t) => {
  const streaming = data(
    await op.query('lookupSalesType.getSalesTypeLookup', { original: '  STREAMING ' }),
  );
  t.match(streaming, {
    original: 'Streaming',
    originalNormalized: 'streaming',
    cleansed: 'Streaming',
    primarySalesType: 'Streaming',
    secondarySalesType: 'Interactive Streaming',
    status: 'verified',
  });
  const all = data(
    await op.query('lookupSalesType.list', { pagination: { page: 1, limit: 2000 } }),
  );
  t.equal(all.pagination.total, 52);
  const { rows } = await db.query(
    'SELECT DISTINCT primary_sales_type FROM sales_type_taxonomy ORDER BY 1',
  );
  t.same(
    rows.map((r) => r.primary_sales_type),
    [
      'Download',
      'Mechanical',
      'Neighboring Rights',
      'Other',
      'Physical',
      'Print',
      'Public Performance',
      'Streaming',
      'Sync',
      'UGC',
    ],
  );
});

t.test('create upserts by normalized original; update, get and delete', async (t) => {
  const shipped = data(
    await op.query('lookupSalesType.getSalesTypeLookup', { original: 'Stream' }),
  );
  // "Stream" is shipped: an original with the same normalized key replaces it instead of adding a duplicate
  const created = data(
    await op.mutate('lookupSalesType.create', {
      original: 'Stream Subscription Premium',
      cleansed: 'Subscription Stream',
      reason: { by: 'test' },
    }),
  );
  t.match(created, {
    id: shipped.id,
    original: 'Stream Subscription Premium',
    originalNormalized: 'stream',
    cleansed: 'Subscription Stream',
    primarySalesType: null,
    secondarySalesType: null,
    status: 'verified',
    reason: { by: 'test' },
    created: false,
  });
  const fresh = data(
    await op.mutate('lookupSalesType.create', {
      original: 'Cloud Locker Sale',
      cleansed: 'Cloud Locker Sale',
      primarySalesType: 'Download',
    }),
  );
  t.match(fresh, {
    originalNormalized: 'cloud locker sale',
    primarySalesType: 'Download',
    secondarySalesType: null,
    created: true,
  });
  await op.mutate('lookupSalesType.delete', { id: fresh.id });

  const again = data(
    await op.mutate('lookupSalesType.create', {
      original: 'STREAM',
      cleansed: 'Stream',
      primarySalesType: 'Streaming',
      secondarySalesType: 'Interactive Streaming',
      status: 'verified',
    }),
  );
  t.equal(again.id, created.id);
  t.equal(again.created, false);
  t.equal(again.primarySalesType, 'Streaming');

  const updated = data(
    await op.mutate('lookupSalesType.update', {
      id: again.id,
      primarySalesType: 'Download',
      secondarySalesType: 'Track Download',
      status: 'reviewed',
    }),
  );
  t.match(updated, {
    id: again.id,
    cleansed: 'Stream',
    primarySalesType: 'Download',
    secondarySalesType: 'Track Download',
    status: 'reviewed',
  });
  // a new primary alone drops the secondary of the old one
  const primaryOnly = data(
    await op.mutate('lookupSalesType.update', { id: again.id, primarySalesType: 'Sync' }),
  );
  t.match(primaryOnly, { primarySalesType: 'Sync', secondarySalesType: null });
  const cleared = data(
    await op.mutate('lookupSalesType.update', {
      id: again.id,
      primarySalesType: null,
      reason: null,
    }),
  );
  t.match(cleared, { primarySalesType: null, secondarySalesType: null, reason: null });

  t.same(data(await op.query('lookupSalesType.getSalesTypeLookup', { id: again.id })), cleared);
  t.same(data(await op.mutate('lookupSalesType.delete', { id: again.id })), {
    id: again.id,
    deleted: true,
  });
  isError(
    t,
    await op.query('lookupSalesType.getSalesTypeLookup', { id: again.id }),
    'NOT_FOUND',
    'SALES_TYPE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.query('lookupSalesType.getSalesTypeLookup', { original: 'never seen this' }),
    'NOT_FOUND',
    'SALES_TYPE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.delete', { id: again.id }),
    'NOT_FOUND',
    'SALES_TYPE_LOOKUP_NOT_FOUND',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.update', { id: again.id, status: 'x' }),
    'NOT_FOUND',
    'SALES_TYPE_LOOKUP_NOT_FOUND',
  );
});

t.test('sales types outside the taxonomy and malformed input are refused', async (t) => {
  isError(
    t,
    await op.mutate('lookupSalesType.create', {
      original: 'Podcast',
      cleansed: 'Podcast',
      primarySalesType: 'Podcasting',
    }),
    'BAD_REQUEST',
    'SALES_TYPE_NOT_IN_TAXONOMY',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.create', {
      original: 'Podcast',
      cleansed: 'Podcast',
      primarySalesType: 'Streaming',
      secondarySalesType: 'Vinyl',
    }),
    'BAD_REQUEST',
    'SALES_TYPE_NOT_IN_TAXONOMY',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.create', {
      original: 'Podcast',
      cleansed: 'Podcast',
      secondarySalesType: 'Vinyl',
    }),
    'BAD_REQUEST',
    'SALES_TYPE_NOT_IN_TAXONOMY',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.create', { original: '--- !!', cleansed: 'x' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await op.mutate('lookupSalesType.create', { original: 'x'.repeat(501), cleansed: 'x' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await op.query('lookupSalesType.getSalesTypeLookup', {}),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await op.query('lookupSalesType.getSalesTypeLookup', { id: randomUUID(), original: 'Stream' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await op.query('lookupSalesType.list', { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
});

t.test('list: search, status filter, sort and the shared envelope', async (t) => {
  await op.mutate('lookupSalesType.create', {
    original: 'Zeta Review Type',
    cleansed: 'Zeta',
    status: 'needs_review',
    primarySalesType: 'Other',
    secondarySalesType: 'Other Income',
  });
  const review = data(await op.query('lookupSalesType.list', { status: 'needs_review' }));
  t.same(
    review.data.map((r: any) => r.original),
    ['Zeta Review Type'],
  );
  t.same(review.pagination, {
    page: 1,
    limit: 300,
    total: 1,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const search = data(await op.query('lookupSalesType.list', { search: 'ringtone' }));
  t.same(
    search.data.map((r: any) => r.original),
    ['Ringtone'],
  );
  const byPrimary = data(
    await op.query('lookupSalesType.list', {
      search: 'mechanical',
      pagination: { page: 1, limit: 2, sortBy: 'original', sortOrder: 'desc' },
    }),
  );
  t.same(
    byPrimary.data.map((r: any) => r.original),
    ['Physical Mechanical', 'Mechanicals'],
  );
  t.same(byPrimary.pagination, {
    page: 1,
    limit: 2,
    total: 4,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
  });
  const several = data(
    await op.query('lookupSalesType.list', { status: ['needs_review', 'nothing'] }),
  );
  t.equal(several.pagination.total, 1);
});

t.test(
  'list: LIKE wildcards and punctuation in a search match literally, not every entry',
  async (t) => {
    const pct = data(
      await op.mutate('lookupSalesType.create', {
        original: 'Bonus 100% Track',
        cleansed: 'Bonus_100% Track',
      }),
    );
    const under = data(
      await op.mutate('lookupSalesType.create', {
        original: 'Promo under_score',
        cleansed: 'Promo',
      }),
    );
    const slash = data(
      await op.mutate('lookupSalesType.create', {
        original: 'Back\\slash Sale',
        cleansed: 'Backslash',
      }),
    );
    const ids = (res: any) => res.data.map((r: any) => r.id).sort();
    for (const search of ['!!!', '--', '*'])
      t.equal(data(await op.query('lookupSalesType.list', { search })).pagination.total, 0, search);
    t.same(ids(data(await op.query('lookupSalesType.list', { search: '%' }))), [pct.id]);
    t.same(
      ids(data(await op.query('lookupSalesType.list', { search: '_' }))),
      [pct.id, under.id].sort(),
    );
    t.same(ids(data(await op.query('lookupSalesType.list', { search: '\\' }))), [slash.id]);
    t.same(ids(data(await op.query('lookupSalesType.list', { search: '100%' }))), [pct.id]);
    for (const e of [pct, under, slash]) await op.mutate('lookupSalesType.delete', { id: e.id });
  },
);

t.test(
  'missingSalesTypes: raw values of all organizations with no entry, by USD then rows',
  async (t) => {
    const other = await newOrganization(srv, 'Other Org');
    const [s1, s2, s3] = [randomUUID(), randomUUID(), randomUUID()];
    const orgA = owner.organizationId;
    const orgB = other.organizationId;
    await reportRawValue(db, {
      organizationId: orgA,
      statementId: s1,
      kind: 'sales_type',
      raw: 'Cloud Locker',
      rows: 10,
      usd: '12.5000',
    });
    await reportRawValue(db, {
      organizationId: orgB,
      statementId: s2,
      kind: 'sales_type',
      raw: 'CLOUD LOCKER',
      rows: 5,
      usd: '7.25',
    });
    await reportRawValue(db, {
      organizationId: orgA,
      statementId: s1,
      kind: 'sales_type',
      raw: 'Bundle Credit',
      rows: 100,
      usd: '3.10',
    });
    await reportRawValue(db, {
      organizationId: orgB,
      statementId: s3,
      kind: 'sales_type',
      raw: 'Unpriced Thing',
      rows: 999,
      usd: null,
    });
    await reportRawValue(db, {
      organizationId: orgA,
      statementId: s3,
      kind: 'sales_type',
      raw: 'Streaming',
      rows: 50,
      usd: '500',
    });
    await reportRawValue(db, {
      organizationId: orgA,
      statementId: s3,
      kind: 'source',
      raw: 'Cloud Locker',
      rows: 50,
      usd: '500',
    });
    const missing = data(await op.query('lookupSalesType.missingSalesTypes'));
    t.same(missing.data, [
      {
        original: 'Cloud Locker',
        normalized: 'cloud locker',
        variants: ['CLOUD LOCKER', 'Cloud Locker'],
        rowCount: 15,
        usdAmount: '19.75',
        statementCount: 2,
        organizationCount: 2,
      },
      {
        original: 'Bundle Credit',
        normalized: 'bundle credit',
        variants: ['Bundle Credit'],
        rowCount: 100,
        usdAmount: '3.1',
        statementCount: 1,
        organizationCount: 1,
      },
      {
        original: 'Unpriced Thing',
        normalized: 'unpriced thing',
        variants: ['Unpriced Thing'],
        rowCount: 999,
        usdAmount: null,
        statementCount: 1,
        organizationCount: 1,
      },
    ]);
    t.same(missing.pagination, {
      page: 1,
      limit: 300,
      total: 3,
      totalPages: 1,
      hasNext: false,
      hasPrev: false,
    });
    const byRows = data(
      await op.query('lookupSalesType.missingSalesTypes', {
        pagination: { page: 1, limit: 1, sortBy: 'rowCount', sortOrder: 'desc' },
      }),
    );
    t.same(
      byRows.data.map((r: any) => r.original),
      ['Unpriced Thing'],
    );
    t.equal(byRows.pagination.total, 3);

    // one entry for a variant resolves every spelling at once
    await op.mutate('lookupSalesType.create', {
      original: 'cloud-locker',
      cleansed: 'Cloud Locker',
      primarySalesType: 'Other',
      secondarySalesType: 'Other Income',
    });
    const after = data(await op.query('lookupSalesType.missingSalesTypes'));
    t.same(
      after.data.map((r: any) => r.original),
      ['Bundle Credit', 'Unpriced Thing'],
    );
    const beyond = data(
      await op.query('lookupSalesType.missingSalesTypes', { pagination: { page: 5, limit: 10 } }),
    );
    t.same(beyond, {
      data: [],
      pagination: { page: 5, limit: 10, total: 2, totalPages: 1, hasNext: false, hasPrev: true },
    });
  },
);

t.test(
  'resolveWithAI: built-in proposal, confidence and reason; saveToDb never overwrites a verified entry',
  async (t) => {
    const exact = data(await op.mutate('lookupSalesType.resolveWithAI', { original: 'RINGTONE' }));
    t.match(exact, {
      original: 'RINGTONE',
      normalized: 'ringtone',
      provider: 'builtin',
      method: 'lookup',
      confidence: 1,
      saved: false,
    });
    t.same(exact.proposal, {
      cleansed: 'Ringtone',
      primarySalesType: 'Download',
      secondarySalesType: 'Ringtone',
    });
    t.equal(exact.entry.original, 'Ringtone');

    const ruled = data(
      await op.mutate('lookupSalesType.resolveWithAI', {
        original: 'NEIGHBOURING RIGHTS - PRIVATE COPY LEVY',
      }),
    );
    t.match(ruled, { method: 'rule', confidence: 0.9, saved: false, entry: null });
    t.same(ruled.proposal, {
      cleansed: 'Neighbouring Rights - Private Copy Levy',
      primarySalesType: 'Neighboring Rights',
      secondarySalesType: 'Private Copying',
    });
    t.match(ruled.reason, /rule "private copy\*"/);

    const nothing = data(
      await op.mutate('lookupSalesType.resolveWithAI', { original: 'Qwzx Blorp', saveToDb: true }),
    );
    t.match(nothing, { proposal: null, confidence: 0, method: 'none', saved: false, entry: null });
    isError(
      t,
      await op.query('lookupSalesType.getSalesTypeLookup', { original: 'Qwzx Blorp' }),
      'NOT_FOUND',
      'SALES_TYPE_LOOKUP_NOT_FOUND',
    );

    const saved = data(
      await op.mutate('lookupSalesType.resolveWithAI', {
        original: 'Bundle Credit Download',
        saveToDb: true,
      }),
    );
    t.match(saved, {
      method: 'rule',
      saved: true,
      entry: {
        original: 'Bundle Credit Download',
        status: 'ai_suggested',
        primarySalesType: 'Download',
        secondarySalesType: 'Album Download',
      },
    });
    t.match(saved.entry.reason, { resolvedBy: 'builtin', method: 'rule', confidence: 0.9 });
    // the saved entry is now a lookup: resolving again finds it
    const second = data(
      await op.mutate('lookupSalesType.resolveWithAI', {
        original: 'bundle credit download',
        saveToDb: true,
      }),
    );
    t.match(second, { method: 'lookup', saved: false, entry: { id: saved.entry.id } });
  },
);

t.test('batchResolveWithAI: results in input order, at most 10 strings', async (t) => {
  const out = data(
    await op.mutate('lookupSalesType.batchResolveWithAI', {
      salesTypes: ['Vinyl LP', 'Webcast', 'Vinyl LP'],
      saveToDb: true,
    }),
  );
  t.same(
    out.results.map((r: any) => [r.original, r.proposal?.secondarySalesType, r.method, r.saved]),
    [
      ['Vinyl LP', 'Vinyl', 'rule', true],
      ['Webcast', 'Non-interactive Streaming', 'rule', true],
      ['Vinyl LP', 'Vinyl', 'lookup', false],
    ],
  );
  const eleven = Array.from({ length: 11 }, (_, i) => `Stream ${i}`);
  const tooMany = await op.mutate('lookupSalesType.batchResolveWithAI', { salesTypes: eleven });
  isError(t, tooMany, 'BAD_REQUEST', 'RESOLVE_BATCH_TOO_LARGE');
  t.equal(tooMany.status, 400);
  isError(
    t,
    await op.mutate('lookupSalesType.batchResolveWithAI', { salesTypes: [] }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});
