// Consistency across the statement lifecycle, over real HTTP with the job runner running:
// upload → process → reprocess (uploadAction reprocess, mapping.updateById redrive) → skip / bad
// / delete (soft) / restore → file.deleteFilesByIds → rightsholder.deleteById, and after each step
// analytics (cube.query), the statement records (upload.statements), freshness, the catalog block
// (after its refresh) and exports must agree, to the last decimal.
//
// Races (a redrive while a statement is processing, a delete while it is processing) are made
// deterministic with a gate in front of the normalize thread: the ingest job of a gated statement
// stops there, in `processing`, until the test releases it.
import t, { type Test } from 'tap';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { taskList as defaultTaskList } from '../../src/jobs/tasks.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import type { Deps } from '../../src/deps.ts';
import type { NormalizeInput } from '../../src/ingest/normalizeTypes.ts';
import type { TaskOptions } from '../../src/workers/threadPool.ts';
import { createRightsholder, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { eurReportFields } from '../helpers/sampleMapping.ts';
import { startTestServer } from '../helpers/server.ts';
import { downloadAll, readCsv, runExport } from '../api/export/helpers.ts';

t.setTimeout(600_000);

// ---- the gate in front of normalize ----------------------------------------------------------
interface Gate {
  reached: Promise<void>;
  release: () => void;
  onReached: () => void;
}
const gates = new Map<string, Gate>();
function gate(statementId: string): Gate {
  let onReached!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (onReached = r));
  const released = new Promise<void>((r) => (release = r));
  const g: Gate = { reached, release, onReached };
  (g as any).released = released;
  gates.set(statementId, g);
  return g;
}
function gatedDeps(deps: Deps): Deps {
  const threads = Object.create(deps.threads);
  threads.normalize = async (input: NormalizeInput, options?: TaskOptions) => {
    const g = gates.get(input.statementId);
    if (g) {
      gates.delete(input.statementId);
      g.onReached();
      await (g as any).released;
    }
    return deps.threads.normalize(input, options);
  };
  return { ...deps, threads };
}

const srv = await startTestServer(t, {
  role: 'serve',
  taskList: (deps) => ({
    ...defaultTaskList(deps),
    [STATEMENT_INGEST_TASK]: statementIngestTask(gatedDeps(deps)),
  }),
});
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Consistency Label');
const org = owner.organizationId;
const client = owner.client;
const rhA = await createRightsholder(client, org, 'Artist A');
const rhB = await createRightsholder(client, org, 'Artist B');

// ---- a layout of our own; net and gross columns, so that a mapping change changes the totals ----
// No column, header, preamble or file name names its currency (the mapping says EUR): without its
// mapping the layout cannot be proven by automatic mapping (docs/auto-mapping.md), and a statement
// of it waits in needs_mapping
const header = ['Period', 'Store', 'Track', 'ISRC', 'Country', 'Qty', 'Net', 'Gross'];
const fieldsNet = { ...eurReportFields, royaltyEarnings: { column: 'Net' } };
const fieldsGross = { ...fieldsNet, royaltyEarnings: { column: 'Gross' } };
const created = await client.mutate('mapping.create', {
  organizationId: org,
  name: 'Consistency layout',
  headers: header,
  headerHash: computeHeaderHash(header),
  fields: fieldsNet,
});
if (!created.ok) throw new Error(JSON.stringify(created.error));
const mappingId: string = created.data.id;

type Row = [
  period: string,
  store: string,
  track: string,
  isrc: string,
  country: string,
  qty: string,
  net: string,
  gross: string,
];
function csv(rows: Row[]): Buffer {
  return Buffer.from([header, ...rows].map((r) => r.join(',')).join('\n') + '\n');
}

// exact decimal arithmetic on strings (12 decimals is plenty for these files)
const SCALE = 12n;
const toUnits = (s: string) => {
  const neg = s.startsWith('-');
  const [i, f = ''] = (neg ? s.slice(1) : s).split('.');
  const v =
    BigInt(i || '0') * 10n ** SCALE +
    BigInt((f + '0'.repeat(Number(SCALE))).slice(0, Number(SCALE)) || '0');
  return neg ? -v : v;
};
const fromUnits = (v: bigint) => {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const i = a / 10n ** SCALE;
  const f = (a % 10n ** SCALE).toString().padStart(Number(SCALE), '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${i}${f ? `.${f}` : ''}`;
};
/** canonical decimal text: no trailing zeros, no trailing dot, -0 is 0 */
const dec = (s: string | null | undefined) =>
  s === null || s === undefined ? null : fromUnits(toUnits(s));
const sum = (xs: string[]) => fromUnits(xs.reduce((a, x) => a + toUnits(x), 0n));

// ---- the statements of the scenario -------------------------------------------------------------
const filesA1: Row[] = [
  ['2024-08', 'Spotify', 'Summer Nights', 'USRC12400001', 'US', '1000', '3.125', '4.5'],
  ['2024-08', 'Apple Music', 'Summer Nights', 'USRC12400001', 'DE', '200', '1.10', '1.25'],
  ['2024-08', 'Deezer', 'Winter Song', 'FRXYZ2400002', 'FR', '50', '0.333333333333', '0.5'],
];
const filesA2: Row[] = [
  ['2024-09', 'Spotify', 'Winter Song', 'FRXYZ2400002', 'US', '10', '7.77', '9.99'],
  ['2024-09', 'YouTube', 'Autumn Leaves', 'GBAAA2400003', 'GB', '20', '0.01', '0.02'],
];
const filesB1: Row[] = [
  ['2024-08', 'Spotify', 'Other Tune', 'USBBB2400004', 'US', '5', '10.000000000001', '12'],
  ['2024-08', 'Tidal', 'Other Tune', 'USBBB2400004', 'NO', '1', '-0.5', '0'],
];
const net = (rows: Row[]) => sum(rows.map((r) => r[6]));
const gross = (rows: Row[]) => sum(rows.map((r) => r[7]));

// ---- readers ------------------------------------------------------------------------------------
const m = (name: string) => `analytics_full_view.${name}`;
/** cube.query per rightsholder and statement: rows, net (statement currency), USD */
async function analytics(): Promise<
  Map<string, { rh: string; rows: number; net: string; usd: string | null }>
> {
  const res = await client.mutate('cube.query', {
    organizationId: org,
    query: {
      dimensions: [m('rightsholder_id'), m('statement_id')],
      measures: [m('statement_row_count'), m('royalty_earnings'), m('royalty_earnings_usd')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rhA, rhB] }],
      limit: 1000,
    },
  });
  if (!res.ok) throw new Error(`cube.query: ${JSON.stringify(res.error)}`);
  const out = new Map<string, { rh: string; rows: number; net: string; usd: string | null }>();
  for (const r of res.data.data as Record<string, string | null>[]) {
    out.set(String(r[m('statement_id')]), {
      rh: String(r[m('rightsholder_id')]),
      rows: Number(r[m('statement_row_count')]),
      net: dec(r[m('royalty_earnings')])!,
      usd: dec(r[m('royalty_earnings_usd')]),
    });
  }
  return out;
}
async function rhTotals(
  rh: string,
): Promise<{ rows: number; net: string | null; usd: string | null }> {
  const res = await client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('statement_row_count'), m('royalty_earnings'), m('royalty_earnings_usd')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
    },
  });
  if (!res.ok) throw new Error(`cube.query: ${JSON.stringify(res.error)}`);
  const r = (res.data.data as Record<string, string | null>[])[0] ?? {};
  return {
    rows: Number(r[m('statement_row_count')] ?? 0),
    net: dec(r[m('royalty_earnings')] ?? '0'),
    usd: dec(r[m('royalty_earnings_usd')] ?? '0'),
  };
}
async function record(statementId: string): Promise<any> {
  const res = await client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [statementId], includeDeleted: true },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.items[0] ?? null;
}
async function poll<T>(
  what: string,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`${what}: still ${JSON.stringify(v)} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
/** no ingest or block refresh queued or running, no statement uploaded/processing */
async function settle(ms = 120_000): Promise<void> {
  await poll(
    'jobs settle',
    async () =>
      (
        await db.query<{ jobs: number; busy: number; blocks: number }>(
          `SELECT (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier IN ('statement_ingest', 'catalog_block_refresh') AND attempts < max_attempts) AS jobs,
             (SELECT count(*)::int FROM statements WHERE organization_id = $1 AND status IN ('uploaded', 'processing')) AS busy,
             (SELECT count(*)::int FROM catalog_blocks WHERE organization_id = $1 AND state <> 'idle') AS blocks`,
          [org],
        )
      ).rows[0]!,
    (r) => r.jobs === 0 && r.busy === 0 && r.blocks === 0,
    ms,
  );
}
/** the catalog block of a rightsholder, as musicalDetails.getMusicalDetails answers it: rows and USD */
async function catalogOf(rh: string): Promise<{ details: number; rows: number; usd: string }> {
  const res = await client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: { rightsholderId: { in: [rh] } },
    pagination: { page: 1, pageSize: 2000 },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  const items = res.data.data as any[];
  return {
    details: items.length,
    rows: items.reduce((n, d) => n + Number(d.rowCount), 0),
    usd: sum(items.map((d) => String(d.earningsUsd ?? '0'))),
  };
}

/** What analytics must hold: per statement, the rows the file gave (docs/ingestion.md: processed, not deleted/skipped/bad). */
type Expect = Record<string, { rh: string; rows: Row[]; field: 'net' | 'gross' }>;
async function checkInvariants(t: Test, expected: Expect, label: string) {
  await settle();
  const a = await analytics();
  const want = new Map(
    Object.entries(expected).map(([id, e]) => [
      id,
      { rh: e.rh, rows: e.rows.length, net: e.field === 'net' ? net(e.rows) : gross(e.rows) },
    ]),
  );
  t.same(
    [...a.entries()].map(([id, v]) => [id, v.rh, v.rows, v.net]).sort(),
    [...want.entries()].map(([id, v]) => [id, v.rh, v.rows, dec(v.net)]).sort(),
    `${label}: analytics per statement (rows, net)`,
  );
  // each statement record agrees with analytics
  for (const [id, v] of a) {
    const s = await record(id);
    t.match(
      {
        status: s?.status,
        deleted: s?.deletedAt !== null,
        keptRows: s?.keptRows,
        net: dec(s?.netEarnings),
        totals: (s?.currencyTotals ?? []).map((c: any) => [c.currency, c.rows, dec(c.net)]),
      },
      {
        status: 'processed',
        deleted: false,
        keptRows: v.rows,
        net: v.net,
        totals: [['EUR', v.rows, v.net]],
      },
      `${label}: record of ${id} matches analytics`,
    );
  }
  // the catalog block of each rightsholder equals analytics (rows, USD) after its refresh
  for (const rh of [rhA, rhB]) {
    const totals = await rhTotals(rh);
    const cat = await catalogOf(rh);
    t.same(
      { rows: cat.rows, usd: cat.usd },
      { rows: totals.rows, usd: totals.usd ?? '0' },
      `${label}: catalog block of ${rh === rhA ? 'A' : 'B'} equals analytics`,
    );
  }
  const ready = await client.query('dataFreshness.isReady', {
    organizationId: org,
    rightsholderIds: [rhA, rhB],
  });
  t.match(ready.data, { ready: true, notInAnalytics: [] }, `${label}: isReady`);
}

async function act(type: string, statementId: string): Promise<any> {
  return client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type, statementId },
  });
}
async function actOk(type: string, statementId: string): Promise<any> {
  const res = await act(type, statementId);
  if (!res.ok) throw new Error(`${type} ${statementId}: ${JSON.stringify(res.error)}`);
  return res.data;
}
async function listObjects(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}
const versionOf = async (id: string) =>
  (
    await db.query<{ v: number }>('SELECT normalized_version AS v FROM statements WHERE id = $1', [
      id,
    ])
  ).rows[0]?.v;

// ---- the scenario -------------------------------------------------------------------------------
const a1 = await putFile(client, org, rhA, 'a1.csv', csv(filesA1));
const a2 = await putFile(client, org, rhA, 'a2.csv', csv(filesA2));
const b1 = await putFile(client, org, rhB, 'b1.csv', csv(filesB1));
for (const s of [a1, a2, b1]) await waitForStatement(client, org, s.statementId);
const expected: Expect = {
  [a1.statementId]: { rh: rhA, rows: filesA1, field: 'net' },
  [a2.statementId]: { rh: rhA, rows: filesA2, field: 'net' },
  [b1.statementId]: { rh: rhB, rows: filesB1, field: 'net' },
};

t.test('processed: analytics, records, catalog and freshness agree', async (t) => {
  await checkInvariants(t, expected, 'initial');
  const totals = await rhTotals(rhA);
  t.same([totals.rows, totals.net], [5, '12.338333333333'], 'A: 3 + 2 rows, 4.558333333333 + 7.78');
  const stats = await client.query('dataFreshness.ingestionStats', {
    organizationId: org,
    rightsholderIds: [rhA],
  });
  t.match(stats.data, {
    rows: { kept: 5 },
    earnings: [{ currency: 'EUR', rows: 5, royaltyEarnings: '12.338333333333' }],
  });
});

t.test('reprocess: never twice, never half; two reprocesses in quick succession', async (t) => {
  const v = await versionOf(a1.statementId);
  await actOk('reprocess', a1.statementId);
  // the second one either replaces the queued job or meets the statement processing: CONFLICT
  const second = await act('reprocess', a1.statementId);
  if (!second.ok) t.equal(second.error.data.errorCode, 'STATEMENT_STATE_CONFLICT');
  await checkInvariants(t, expected, 'after two reprocesses');
  t.ok((await versionOf(a1.statementId))! > v!, 'a new version');
});

t.test(
  'skip, bad, soft delete and restore move the statement out of and back into analytics and the catalog',
  async (t) => {
    await actOk('skip', a2.statementId);
    const { [a2.statementId]: _a2, ...withoutA2 } = expected;
    await checkInvariants(t, withoutA2, 'a2 skipped');
    await actOk('bad', a2.statementId);
    await checkInvariants(t, withoutA2, 'a2 bad');
    await actOk('reprocess', a2.statementId);
    await waitForStatement(client, org, a2.statementId);
    await checkInvariants(t, expected, 'a2 reprocessed from bad');

    const del = await actOk('delete', a1.statementId);
    t.equal(del.status, 'deleted');
    const { [a1.statementId]: _a1, ...withoutA1 } = expected;
    await checkInvariants(t, withoutA1, 'a1 soft-deleted');
    const listed = await client.mutate('upload.statements', {
      organizationId: org,
      filter: { statementIds: [a1.statementId] },
    });
    t.same(listed.data.items, [], 'not listed without includeDeleted');
    const restored = await actOk('restore', a1.statementId);
    t.equal(restored.status, 'processed');
    await checkInvariants(t, expected, 'a1 restored');
  },
);

t.test('reprocess while a redrive is queued: one version, the new mapping', async (t) => {
  // a redrive of a2 whose job is held at the gate: a reprocess meanwhile is accepted (as a redrive
  // of a processing statement is): the held run commits nothing, the next one reads it
  const g = gate(a2.statementId);
  const upd = await client.mutate('mapping.updateById', {
    organizationId: org,
    id: mappingId,
    fields: fieldsGross,
    redriveFileIds: [a2.statementId],
  });
  t.equal(upd.ok, true, 'mapping.updateById with a redrive');
  await g.reached; // the redrive's job holds a2 in processing
  t.equal((await record(a2.statementId)).status, 'processing');
  const r = await act('reprocess', a2.statementId);
  t.equal(r.ok ? 'ok' : r.error.data.errorCode, 'ok', 'reprocess while processing is accepted');
  t.equal(
    (await record(a2.statementId)).status,
    'uploaded',
    'sent back: the held run will commit nothing',
  );
  g.release();
  await waitForStatement(client, org, a2.statementId);
  // a queued redrive replaced by a reprocess
  const upd2 = await client.mutate('mapping.updateById', {
    organizationId: org,
    id: mappingId,
    name: 'Consistency layout (gross)',
    redriveFileIds: [b1.statementId],
  });
  t.equal(upd2.ok, true);
  const r2 = await act('reprocess', b1.statementId);
  if (!r2.ok) t.equal(r2.error.data.errorCode, 'STATEMENT_STATE_CONFLICT');
  await waitForStatement(client, org, b1.statementId);
  expected[a2.statementId]!.field = 'gross';
  expected[b1.statementId]!.field = 'gross';
  await checkInvariants(t, expected, 'redriven with the gross mapping');
});

t.test(
  'a redrive while the statement is processing: the runs take turns, the newer mapping wins',
  async (t) => {
    // a1 is reprocessed with the gross mapping; its job is held at the gate (processing)
    const g = gate(a1.statementId);
    await actOk('reprocess', a1.statementId);
    await g.reached;
    t.equal((await record(a1.statementId)).status, 'processing');
    const before = (await versionOf(a1.statementId))!;
    // meanwhile the mapping goes back to net, and a1 is redriven with it: allowed from processing
    const upd = await client.mutate('mapping.updateById', {
      organizationId: org,
      id: mappingId,
      fields: fieldsNet,
      redriveFileIds: [a1.statementId],
    });
    t.equal(upd.ok, true, 'redrive of a processing statement is accepted');
    const revision = upd.data.revision;
    // the redrive's run waits for the held one (a statement's runs never overlap); the held run,
    // sent back to be processed again meanwhile, commits nothing of its gross rows
    g.release();
    await settle();
    const s = await record(a1.statementId);
    const a = (await analytics()).get(a1.statementId);
    t.same(
      { status: s.status, revision: s.mappingRevision, net: dec(s.netEarnings) },
      { status: 'processed', revision, net: net(filesA1) },
      'the redrive, with the latest mapping revision',
    );
    t.equal(dec(s.netEarnings), a?.net, 'record and analytics agree on the statement');
    const after = (await versionOf(a1.statementId))!;
    t.equal(after, before + 1, 'one new version: the held run wrote none');
    const objects = await listObjects(`orgs/${org}/statements/${a1.statementId}/normalized/`);
    t.same(
      objects,
      [`orgs/${org}/statements/${a1.statementId}/normalized/v${after}.parquet`],
      'only the current version is stored',
    );
    await checkInvariants(t, expected, 'after the redrive');
  },
);

t.test('a delete while processing: file.deleteFilesByIds leaves nothing behind', async (t) => {
  const c1 = await putFile(
    client,
    org,
    rhB,
    'c1.csv',
    csv([['2024-08', 'Spotify', 'Gone Tune', 'USCCC2400005', 'US', '3', '2.5', '3']]),
    {},
  );
  await waitForStatement(client, org, c1.statementId);
  // the mapping is back at net since the race above
  expected[c1.statementId] = {
    rh: rhB,
    rows: [['2024-08', 'Spotify', 'Gone Tune', 'USCCC2400005', 'US', '3', '2.5', '3']],
    field: 'net',
  };
  await checkInvariants(t, expected, 'c1 processed');
  const g = gate(c1.statementId);
  await actOk('reprocess', c1.statementId);
  await g.reached;
  const info = await client.query('file.getFilesDeleteInfo', {
    organizationId: org,
    uploadId: c1.uploadId,
    fileIds: [c1.statementId],
  });
  t.equal(info.ok, true, 'getFilesDeleteInfo');
  const del = await client.mutate('file.deleteFilesByIds', {
    organizationId: org,
    uploadId: c1.uploadId,
    fileIds: [c1.statementId],
  });
  t.equal(del.ok, true, 'deleteFilesByIds while processing');
  delete expected[c1.statementId];
  g.release();
  await settle();
  await checkInvariants(t, expected, 'c1 deleted');
  t.equal(await record(c1.statementId), null, 'no record');
  const objects = await listObjects(`orgs/${org}/statements/${c1.statementId}/`);
  // the run that was processing when the delete came commits nothing and takes its objects back
  t.same(objects, [], 'no stored object of the statement is left');
  const left = await db.query(
    `SELECT (SELECT count(*)::int FROM statement_raw_values WHERE statement_id = $1) AS raw, (SELECT count(*)::int FROM statement_flags WHERE statement_id = $1) AS flags,
       (SELECT count(*)::int FROM statement_fx WHERE statement_id = $1) AS fx`,
    [c1.statementId],
  );
  t.same(left.rows[0], { raw: 0, flags: 0, fx: 0 });
  const feed = await db.query<{ action: string }>(
    `SELECT action FROM activity_events WHERE subject_id = $1 ORDER BY created_at, id`,
    [c1.statementId],
  );
  const actions = feed.rows.map((r) => r.action);
  t.ok(actions.includes('file.deleteFilesByIds'), 'the activity shows the delete');
  t.equal(
    actions.at(-1),
    'file.deleteFilesByIds',
    'nothing happens to the statement after its delete',
  );
});

t.test(
  'a skipped statement whose reprocess ends in needs_mapping: analytics and the catalog still agree',
  async (t) => {
    // a2 (gross rows) is skipped: out of analytics and its block
    await actOk('skip', a2.statementId);
    const { [a2.statementId]: saved, ...withoutA2 } = expected;
    await checkInvariants(t, withoutA2, 'a2 skipped again');
    // the organization's mapping goes; a reprocess of a2 then waits for a mapping
    const gone = await client.mutate('mapping.deleteById', { organizationId: org, id: mappingId });
    t.equal(gone.ok, true, 'mapping.deleteById');
    await actOk('reprocess', a2.statementId);
    const s = await waitForStatement(client, org, a2.statementId);
    t.equal(s.status, 'needs_mapping');
    // automatic mapping tried and could not prove the layout: nothing names the currency
    t.equal(s.suggestedMapping?.automatic?.applied, false, 'not mapped automatically');
    t.same(
      (s.suggestedMapping?.automatic?.reasons ?? []).map((r: any) => [r.code, r.field]),
      [['field_missing', 'currency']],
      'the one reason: the currency is named nowhere',
    );
    t.equal(s.mappingId, null);
    await settle();
    // docs/ingestion.md: analytics, exports and the catalog read every statement with a processed
    // version that is not deleted, skipped or marked bad, whatever its current status: a2
    // (needs_mapping) is back in
    const a = await analytics();
    t.equal(
      a.get(a2.statementId)?.net,
      gross(filesA2),
      'analytics reads a2 again (its previous rows)',
    );
    const totals = await rhTotals(rhA);
    const cat = await catalogOf(rhA);
    // the reprocess of a skipped statement queues its block's refresh: its rows count again at once
    t.same(
      { rows: cat.rows, usd: cat.usd },
      { rows: totals.rows, usd: totals.usd },
      'catalog block of A equals analytics',
    );
    // a mapping again, and a2 is released: everything agrees again
    const again = await client.mutate('mapping.create', {
      organizationId: org,
      name: 'Consistency layout again',
      headers: header,
      headerHash: computeHeaderHash(header),
      fields: fieldsGross,
    });
    t.equal(again.ok, true);
    const cb = await client.mutate('upload.callback', {
      organizationId: org,
      type: 'mapping_created',
      mapping_id: again.data.id,
      file_id: a2.statementId,
    });
    t.equal(cb.ok, true, 'callback');
    await waitForStatement(client, org, a2.statementId);
    expected[a2.statementId] = saved!;
    await checkInvariants(t, expected, 'a2 released with a mapping');
  },
);

t.test('exports agree with analytics', async (t) => {
  await settle();
  const ex = await runExport(client, org, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: [rhA, rhB],
  });
  t.equal(ex.status, 'completed');
  const [file] = await downloadAll(client, org, ex.exportId ?? ex.id);
  const table = readCsv(file!.bytes);
  const col = (n: string) => table.columns.indexOf(n);
  for (const rh of [rhA, rhB]) {
    const rows = table.rows.filter((r) => r[col('rightsholder_id')] === rh);
    const totals = await rhTotals(rh);
    t.same(
      {
        rows: rows.reduce((n, r) => n + Number(r[col('row_count')]), 0),
        net: sum(rows.map((r) => r[col('royalty_earnings')]!)),
      },
      { rows: totals.rows, net: totals.net },
      `earnings_summary of ${rh === rhA ? 'A' : 'B'}`,
    );
  }
  const st = await runExport(client, org, {
    type: 'statements',
    format: 'csv',
    rightsholderIds: [rhA, rhB],
  });
  const stTable = readCsv((await downloadAll(client, org, st.exportId ?? st.id))[0]!.bytes);
  const sc = (n: string) => stTable.columns.indexOf(n);
  const a = await analytics();
  t.same(
    stTable.rows
      .map((r) => [
        r[sc('statement_id')],
        r[sc('status')],
        dec(r[sc('royalty_earnings_difference')]),
      ])
      .sort(),
    [...a.keys()].map((id) => [id, 'processed', '0']).sort(),
    'the statements export lists exactly the statements analytics holds, each reconciled',
  );
});

t.test(
  'file.deleteFilesByIds of a processed statement, then rightsholder.deleteById',
  async (t) => {
    // b1 goes for good
    const del = await client.mutate('file.deleteFilesByIds', {
      organizationId: org,
      uploadId: b1.uploadId,
      fileIds: [b1.statementId],
    });
    t.equal(del.ok, true);
    delete expected[b1.statementId];
    await checkInvariants(t, expected, 'b1 deleted');
    t.same(await listObjects(`orgs/${org}/statements/${b1.statementId}/`), [], 'no object of b1');
    t.same(
      (
        await db.query(
          'SELECT count(*)::int AS n FROM statement_raw_values WHERE statement_id = $1',
          [b1.statementId],
        )
      ).rows[0],
      { n: 0 },
    );
    const feed = await client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'file',
      subjectId: b1.statementId,
    });
    t.comment(
      `activity.byEntity: ${JSON.stringify(feed.ok ? feed.data : feed.error).slice(0, 400)}`,
    );
    // A goes with its statements
    const rm = await client.mutate('rightsholder.deleteById', { organizationId: org, id: rhA });
    t.equal(rm.ok, true, 'rightsholder.deleteById');
    await settle();
    const a = await analytics();
    t.same([...a.keys()], [], 'nothing of A in analytics');
    for (const s of [a1, a2])
      t.same(
        await listObjects(`orgs/${org}/statements/${s.statementId}/`),
        [],
        `no object of ${s.statementId}`,
      );
    t.same(
      (
        await db.query('SELECT count(*)::int AS n FROM catalog_blocks WHERE rightsholder_id = $1', [
          rhA,
        ])
      ).rows[0],
      { n: 0 },
      'no block of A',
    );
    t.same(
      (
        await db.query(
          'SELECT count(*)::int AS n FROM musical_details md JOIN catalog_blocks b ON b.id = md.block_id WHERE b.rightsholder_id = $1',
          [rhA],
        )
      ).rows[0],
      { n: 0 },
    );
  },
);
