// A block's musical details built from statements ingested through the real API: identities by
// ISRC (with and without dashes) or by normalized title and artist, raw variants, row counts and
// USD earnings to the last decimal; idempotent refreshes; identities that leave and come back
// get their corrections back; a deleted statement's rows leave the block.
import path from 'node:path';
import t from 'tap';
import { refreshBlock } from '../../src/catalog/blocks.ts';
import { PLAIN_UPSERT_SQL } from '../../src/fx/rates.ts';
import { m } from '../analytics/helpers.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { createRightsholder, putFile, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';
import { distrokid, waitForBlock } from './helpers.ts';

t.setTimeout(900_000);

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Block Org');
const org = owner.organizationId;
const rh = await createRightsholder(owner.client, org, 'Orla Finn');
const db = srv.deps.pool;

const first = await putFile(
  owner.client,
  org,
  rh,
  'dk-march.tsv',
  distrokid([
    ['Orla Finn', 'Summer Nights', 'USRC12400001', '10.10'],
    ['Orla Finn', 'Summer Nights (Radio Edit)', 'US-RC1-24-00001', '5.05'],
    ['Orla Finn', 'SUMMER NIGHTS', '', '1.005'],
    ['ORLA FINN', 'Summer Nights!', '', '2'],
    ['Orla Finn', 'Glasshouse', 'usrc12236601', '3.333333333333'],
    ['Orla Finn', 'Glasshouse', 'USRC12236601', '-0.333333333333'],
  ]),
);
const firstStatus = (await waitForStatement(owner.client, org, first.statementId, 240_000)).status;
const block = await waitForBlock(db, rh, 1);

interface Md {
  identity_key: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  row_count: number;
  earnings_usd: string;
  rows_without_rate: number;
  variants: {
    isrc: string | null;
    title: string;
    artist: string;
    rowCount: number;
    earningsUsd: string;
  }[];
  state: string;
}
async function details(): Promise<Md[]> {
  const { rows } = await db.query<Md>(
    `SELECT identity_key, isrc, title, artist, row_count, earnings_usd::text, rows_without_rate, variants, state
     FROM musical_details WHERE block_id = $1 ORDER BY identity_key`,
    [block],
  );
  return rows;
}

t.test('identities, variants, rows and USD earnings', async (t) => {
  t.equal(firstStatus, 'processed');
  const mds = await details();
  t.same(
    mds.map((m) => [
      m.identity_key,
      m.isrc,
      m.title,
      m.artist,
      m.row_count,
      m.earnings_usd,
      m.rows_without_rate,
    ]),
    [
      ['isrc:USRC12236601', 'USRC12236601', 'Glasshouse', 'Orla Finn', 2, '3', 0],
      ['isrc:USRC12400001', 'USRC12400001', 'Summer Nights', 'Orla Finn', 2, '15.15', 0],
      // a tie on rows: the mixed-case title, not 'SUMMER NIGHTS' (first in byte order)
      ['ta:summer nights\u001forla finn', null, 'Summer Nights!', 'ORLA FINN', 2, '3.005', 0],
    ],
  );
  t.same(
    mds[1]!.variants.map((v) => [v.isrc, v.title, v.rowCount, v.earningsUsd]),
    [
      ['USRC12400001', 'Summer Nights', 1, '10.1'],
      ['US-RC1-24-00001', 'Summer Nights (Radio Edit)', 1, '5.05'],
    ],
    'ISRC spellings with and without dashes are one identity; variants keep the raw spelling',
  );
  t.same(
    mds[2]!.variants.map((v) => [v.title, v.artist, v.earningsUsd]),
    [
      // one row each: the mixed-case title stands for the identity (its artist comes with it)
      ['Summer Nights!', 'ORLA FINN', '2'],
      ['SUMMER NIGHTS', 'Orla Finn', '1.005'],
    ],
  );
});

t.test('a refresh again changes nothing', async (t) => {
  const before = await db.query(
    `SELECT id, identity_key, title, artist, variants, row_count, earnings_usd::text, first_seen_at FROM musical_details WHERE block_id = $1 ORDER BY id`,
    [block],
  );
  const again = await refreshBlock(srv.deps, org, rh);
  t.match(again, { blockId: block, statements: 1, musicalDetails: 3, added: 0, removed: 0 });
  const after = await db.query(
    `SELECT id, identity_key, title, artist, variants, row_count, earnings_usd::text, first_seen_at FROM musical_details WHERE block_id = $1 ORDER BY id`,
    [block],
  );
  t.same(after.rows, before.rows);
});

t.test(
  'rows read from the analytics database: a statement whose rows cannot be read fails the refresh, which succeeds again once they can',
  async (t) => {
    const before = await db.query(
      `SELECT id, identity_key, variants, row_count, earnings_usd::text FROM musical_details WHERE block_id = $1 ORDER BY id`,
      [block],
    );
    const { rows } = await db.query<{ normalized_key: string; normalized_version: number }>(
      'SELECT normalized_key, normalized_version FROM statements WHERE id = $1',
      [first.statementId],
    );
    // a new version of the statement whose object is not in the store
    await db.query(
      'UPDATE statements SET normalized_key = $2, normalized_version = normalized_version + 1 WHERE id = $1',
      [first.statementId, `${rows[0]!.normalized_key}.missing`],
    );
    await t.rejects(refreshBlock(srv.deps, org, rh), /could not be read; the refresh is retried/);
    t.equal(
      (await db.query('SELECT state FROM catalog_blocks WHERE id = $1', [block])).rows[0].state,
      'failed',
    );
    await db.query(
      'UPDATE statements SET normalized_key = $2, normalized_version = $3 WHERE id = $1',
      [first.statementId, rows[0]!.normalized_key, rows[0]!.normalized_version],
    );
    t.match(await refreshBlock(srv.deps, org, rh), {
      blockId: block,
      statements: 1,
      musicalDetails: 3,
      added: 0,
      removed: 0,
    });
    const after = await db.query(
      `SELECT id, identity_key, variants, row_count, earnings_usd::text FROM musical_details WHERE block_id = $1 ORDER BY id`,
      [block],
    );
    t.same(after.rows, before.rows, 'the same details as before');
  },
);

t.test(
  'a second statement adds rows; deleting it takes them out; corrections survive',
  async (t) => {
    const glass = (await details())[0]!;
    const mdId = (
      await db.query(`SELECT id FROM musical_details WHERE block_id = $1 AND identity_key = $2`, [
        block,
        glass.identity_key,
      ])
    ).rows[0].id;
    const second = await putFile(
      owner.client,
      org,
      rh,
      'dk-april.tsv',
      distrokid([
        ['Orla Finn', 'Glasshouse', 'USRC12236601', '0.01'],
        ['Orla Finn', 'Paper Boats', 'USDK82355140', '7.5'],
      ]),
    );
    t.equal(
      (await waitForStatement(owner.client, org, second.statementId, 240_000)).status,
      'processed',
    );
    await waitForBlock(db, rh, 2);
    t.same(
      (await details()).map((m) => [m.identity_key, m.row_count, m.earnings_usd]),
      [
        ['isrc:USDK82355140', 1, '7.5'],
        ['isrc:USRC12236601', 3, '3.01'],
        ['isrc:USRC12400001', 2, '15.15'],
        ['ta:summer nights\u001forla finn', 2, '3.005'],
      ],
    );
    const paper = (
      await db.query(
        `SELECT id FROM musical_details WHERE block_id = $1 AND identity_key = 'isrc:USDK82355140'`,
        [block],
      )
    ).rows[0].id;
    await db.query(
      `INSERT INTO musical_detail_overrides (organization_id, block_id, identity_key, musical_detail_id, kind, "values", created_by)
     VALUES ($1, $2, 'isrc:USDK82355140', $3, 'update_results', '{"title":"Paper Boats (corrected)"}', $4)`,
      [org, block, paper, owner.userId],
    );
    const deleted = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'delete', statementId: second.statementId },
    });
    t.ok(deleted.ok);
    await waitForBlock(db, rh, 1);
    t.same(
      (await details()).map((m) => [m.identity_key, m.row_count, m.earnings_usd]),
      [
        ['isrc:USRC12236601', 2, '3'],
        ['isrc:USRC12400001', 2, '15.15'],
        ['ta:summer nights\u001forla finn', 2, '3.005'],
      ],
    );
    t.equal(
      (await db.query(`SELECT id FROM musical_details WHERE id = $1`, [mdId])).rowCount,
      1,
      'a detail still present keeps its id',
    );
    const orphan = await db.query(
      `SELECT musical_detail_id FROM musical_detail_overrides WHERE identity_key = 'isrc:USDK82355140'`,
    );
    t.same(
      orphan.rows,
      [{ musical_detail_id: null }],
      'the correction stays while its identity is absent',
    );
    const restored = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'restore', statementId: second.statementId },
    });
    t.ok(restored.ok);
    await waitForBlock(db, rh, 2);
    const back = await db.query(
      `SELECT o."values" FROM musical_detail_overrides o JOIN musical_details md ON md.id = o.musical_detail_id WHERE md.identity_key = 'isrc:USDK82355140'`,
    );
    t.same(
      back.rows,
      [{ values: { title: 'Paper Boats (corrected)' } }],
      'and is linked again when the identity comes back',
    );
  },
);

t.test('a EUR statement: USD earnings exactly as analytics computes them', async (t) => {
  // a published rate for the statement period's last day (units of EUR per US dollar)
  await db.query(PLAIN_UPSERT_SQL, [JSON.stringify([{ d: '2024-01-31', c: 'EUR', v: '0.9235' }])]);
  const rhEur = await createRightsholder(owner.client, org, 'Believe Artists');
  const up = await uploadFixture(
    owner.client,
    org,
    rhEur,
    path.join(repoRoot, 'fixtures', 'statements', 'believe.csv'),
  );
  t.equal((await waitForStatement(owner.client, org, up.statementId, 240_000)).status, 'processed');
  const eurBlock = await waitForBlock(db, rhEur, 1);
  const sums = await db.query(
    `SELECT count(*)::int AS details, sum(row_count)::int AS rows, trim_scale(sum(earnings_usd))::text AS usd, sum(rows_without_rate)::int AS no_rate
     FROM musical_details WHERE block_id = $1`,
    [eurBlock],
  );
  const rate = (
    await db.query(
      `SELECT rate::text FROM statement_fx WHERE statement_id = $1 AND currency = 'EUR'`,
      [up.statementId],
    )
  ).rows[0].rate;
  const expected = (
    await db.query(`SELECT trim_scale(730.2174199615 * round($1::numeric, 18))::text AS usd`, [
      rate,
    ])
  ).rows[0].usd;
  t.match(
    sums.rows[0],
    { rows: 30, usd: expected, no_rate: 0 },
    'every row, the expected EUR sum at the statement rate (18 decimals, as analytics)',
  );
  const cube = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('royalty_earnings_usd'), m('statement_row_count')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rhEur] }],
    },
  });
  t.ok(cube.ok, JSON.stringify(cube.error));
  const analyticsScale = (
    await db.query(`SELECT usd_answer($1::numeric)::text AS usd`, [sums.rows[0].usd])
  ).rows[0].usd;
  t.equal(
    canonicalDecimal(cube.data.data[0][m('royalty_earnings_usd')]),
    canonicalDecimal(analyticsScale),
    'the same USD total as analytics_full_view (rounded once to 10 decimals, half to even)',
  );
  const perTrack = await db.query(
    `SELECT identity_key, earnings_usd::text FROM musical_details WHERE block_id = $1 ORDER BY earnings_usd DESC, identity_key LIMIT 1`,
    [eurBlock],
  );
  t.match(perTrack.rows[0].identity_key, /^isrc:[A-Z]{2}[A-Z0-9]{3}\d{7}$/);
});

t.test(
  'the job runner enriches what the refreshes found: every detail ends in a terminal state',
  async (t) => {
    const deadline = Date.now() + 240_000;
    for (;;) {
      const count = await owner.client.query('fetching.inQueueCount', { organizationId: org });
      if (count.ok && count.data.count === 0) break;
      if (Date.now() > deadline)
        throw new Error(`queue not drained: ${JSON.stringify(count.data)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const states = await db.query(
      `SELECT state, count(*)::int AS n FROM musical_details WHERE organization_id = $1 GROUP BY state ORDER BY state`,
      [org],
    );
    t.ok(states.rows.length > 0);
    t.ok(
      states.rows.every((r) => ['found', 'not_found'].includes(r.state)),
      JSON.stringify(states.rows),
    );
    const found = await db.query(
      `SELECT provider FROM musical_details WHERE organization_id = $1 AND state = 'found' LIMIT 1`,
      [org],
    );
    t.same(found.rows, [{ provider: 'offline' }]);
  },
);
