// payor.listGlobal: autocomplete over the shipped payors, the payors of the caller's own
// organization's statements and those named in statements of at least three organizations, never
// telling which organization; a payor one or two organizations deal with is not shown to the
// others, and a deleted statement's payors go with it. Statements are ingested for real (upload,
// pipeline); members of any role may use it.
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { addMember, newOrganization, outsider, type Caller } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';
import { isError } from '../../helpers/outcome.ts';

t.setTimeout(240_000);
const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Payor Org');
const db = srv.deps.pool;

const HEADER = ['Period', 'Title', 'Payor', 'Net'];
/** Ingests a statement of `org` whose rows name these payors; its statement id. */
async function ingestPayors(caller: Caller, payors: string[]): Promise<string> {
  const org = caller.organizationId;
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM mappings WHERE organization_id = $1`,
    [org],
  );
  if (rows[0].n === 0) {
    await insertMapping(db, org, 'Payor layout', HEADER, {
      stmtYear: { column: 'Period' },
      stmtPeriod: { column: 'Period' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'Net' },
      rawTitle: { column: 'Title' },
      payor: { column: 'Payor' },
    });
  }
  const rh = await createRightsholder(
    caller.client,
    org,
    `Artist ${payors.length}-${Math.random().toString(36).slice(2, 8)}`,
  );
  const lines = [HEADER.join(','), ...payors.map((p, i) => `2024-03,Song ${i},${p},1.00`)];
  const { statementId } = await putFile(
    caller.client,
    org,
    rh,
    `payors-${Math.random().toString(36).slice(2, 8)}.csv`,
    Buffer.from(`${lines.join('\n')}\n`),
  );
  const s = await waitForStatement(caller.client, org, statementId);
  if (s.status !== 'processed')
    throw new Error(`statement ${s.status}: ${JSON.stringify(s.failureReason)}`);
  return statementId;
}

const names = async (caller: Caller, search?: string) =>
  data(
    await caller.client.query('payor.listGlobal', {
      organizationId: caller.organizationId,
      ...(search ? { search } : {}),
      pagination: { page: 1, limit: 100 },
    }),
  ).data.map((p: any) => p.name);

t.test("the shipped payors, the specification's page sizes by default", async (t) => {
  const page = data(
    await owner.client.query('payor.listGlobal', { organizationId: owner.organizationId }),
  );
  t.equal(page.pagination.total, 48);
  t.equal(page.pagination.limit, 300);
  t.equal(page.data.length, 48);
  t.equal(
    data(
      await owner.client.query('payor.listGlobal', {
        organizationId: owner.organizationId,
        pagination: { page: 1 },
      }),
    ).pagination.limit,
    200,
  );
  t.same(page.data.slice(0, 3), [
    { name: 'Amazon Music', category: 'store' },
    { name: 'Amuse', category: 'distributor' },
    { name: 'Apple Music', category: 'store' },
  ]);
  const desc = data(
    await owner.client.query('payor.listGlobal', {
      organizationId: owner.organizationId,
      pagination: { page: 1, limit: 3, sortBy: 'name', sortOrder: 'desc' },
    }),
  );
  const all = data(
    await owner.client.query('payor.listGlobal', {
      organizationId: owner.organizationId,
      pagination: { page: 1, limit: 100 },
    }),
  );
  t.same(desc.data, all.data.slice(-3).reverse(), 'sortOrder desc: Z to A');
});

t.test(
  "search: names starting with it first, then containing it; the organization's own payors join without their organization",
  async (t) => {
    await ingestPayors(owner, ['Indie Pay Collective', 'Indie Soul Records', 'DISTROKID']);
    const reader = await addMember(srv, owner.organizationId, 'reader');
    const res = data(
      await reader.client.query('payor.listGlobal', {
        organizationId: owner.organizationId,
        search: 'so',
      }),
    );
    t.same(
      res.data.map((p: any) => p.name),
      [
        'SOCAN',
        'Songtrust',
        'Sony Music Entertainment',
        'Sony Music Publishing',
        'SoundExchange',
        'Indie Soul Records',
      ],
      'names starting with the search first, then those containing it',
    );
    const seen = data(
      await reader.client.query('payor.listGlobal', {
        organizationId: owner.organizationId,
        search: 'indie pay',
      }),
    );
    t.same(seen.data, [{ name: 'Indie Pay Collective', category: null }]);
    t.notMatch(JSON.stringify(seen), /organization/i);
    const dk = data(
      await reader.client.query('payor.listGlobal', {
        organizationId: owner.organizationId,
        search: 'distrokid',
      }),
    );
    t.same(
      dk.data,
      [{ name: 'DistroKid', category: 'distributor' }],
      'a seen payor that is also shipped is listed once',
    );
    const paged = data(
      await reader.client.query('payor.listGlobal', {
        organizationId: owner.organizationId,
        search: 'music',
        pagination: { page: 2, limit: 3 },
      }),
    );
    t.equal(paged.pagination.page, 2);
    t.equal(paged.data.length, 3);
  },
);

t.test(
  "another organization's payors stay its own until three organizations name them; a deleted statement's go",
  async (t) => {
    const a = await newOrganization(srv, 'Label A');
    const b = await newOrganization(srv, 'Label B');
    const c = await newOrganization(srv, 'Label C');
    const d = await newOrganization(srv, 'Label D');
    const secret = await ingestPayors(a, ['Secret Client Holdings', 'Shared Rights Agency']);
    await ingestPayors(b, ['shared rights agency']);
    t.same(await names(a, 'secret'), ['Secret Client Holdings'], 'its own payor');
    t.same(await names(d, 'secret'), [], "not another organization's");
    t.same(await names(d, 'shared'), [], 'named by two organizations: not yet shown to others');
    t.same(
      await names(b, 'shared'),
      ['shared rights agency'],
      'each sees its own, in its own spelling',
    );
    await ingestPayors(c, ['Shared Rights Agency']);
    t.same(
      await names(d, 'shared'),
      ['Shared Rights Agency'],
      'named by three organizations: every organization sees it, in the common spelling',
    );
    t.same(
      await names(b, 'shared'),
      ['shared rights agency'],
      'an organization naming it keeps its own spelling',
    );

    // the statement deleted: its payors go with it
    const { rows } = await db.query(`SELECT upload_id FROM statements WHERE id = $1`, [secret]);
    const del = await a.client.mutate('file.deleteFilesByIds', {
      organizationId: a.organizationId,
      uploadId: rows[0].upload_id,
      fileIds: [secret],
    });
    if (!del.ok) throw new Error(JSON.stringify(del.error));
    t.same(await names(a, 'secret'), [], "a deleted statement's payor is no longer listed");
    t.same(await names(d, 'shared'), [], 'and one organization fewer names the shared one');
    // SQL in the search is a search
    t.same(await names(a, "x' OR 1=1 --"), []);
  },
);

t.test('organization scoping', async (t) => {
  const stranger = await outsider(srv, owner.organizationId);
  isError(
    t,
    await stranger.client.query('payor.listGlobal', { organizationId: owner.organizationId }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
  isError(
    t,
    await owner.client.queryUnchecked('payor.listGlobal', {}),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test(
  'the counts the list reads follow every statement in and out of analytics: skip, bad, reprocess, soft delete, restore, file delete',
  async (t) => {
    const org = await newOrganization(srv, 'Counted Label');
    const first = await ingestPayors(org, ['Counted Payor', 'Other Payor']);
    const second = await ingestPayors(org, ['counted payor']);
    // what payor_spellings holds, against the same figure counted from every statement's payors
    const counts = async () =>
      (
        await db.query(
          `SELECT name, statements FROM payor_spellings WHERE organization_id = $1 ORDER BY name`,
          [org.organizationId],
        )
      ).rows;
    const recounted = async () =>
      (
        await db.query(
          `SELECT sp.name, count(*)::int AS statements FROM statement_payors sp JOIN statements s ON s.id = sp.statement_id
         WHERE sp.organization_id = $1 AND s.normalized_key IS NOT NULL AND s.deleted_at IS NULL AND s.status NOT IN ('skipped', 'bad')
         GROUP BY sp.name ORDER BY sp.name`,
          [org.organizationId],
        )
      ).rows;
    const act = async (type: string, statementId: string) => {
      const res = await org.client.mutateUnchecked('upload.uploadAction', {
        organizationId: org.organizationId,
        action: { type, statementId },
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
    };
    const expect = async (
      want: { name: string; statements: number }[],
      listed: string[],
      what: string,
    ) => {
      t.same(await counts(), want, what);
      t.same(await counts(), await recounted(), `${what}: as counted from the statements`);
      t.same(await names(org, 'payor'), listed, `${what}: listed`);
    };
    // (names in the database's order; of two spellings as common, the first in that order is listed, as mode() chose)
    const ALL = [
      { name: 'Counted Payor', statements: 1 },
      { name: 'Other Payor', statements: 1 },
      { name: 'counted payor', statements: 1 },
    ];
    await expect(ALL, ['Counted Payor', 'Other Payor'], 'processed');
    await act('skip', first);
    await expect(
      [{ name: 'counted payor', statements: 1 }],
      ['counted payor'],
      'the first skipped',
    );
    await act('bad', first);
    await expect([{ name: 'counted payor', statements: 1 }], ['counted payor'], 'then marked bad');
    // sent back: its earlier rows count again at once
    await act('reprocess', first);
    await expect(ALL, ['Counted Payor', 'Other Payor'], 'reprocessed');
    await waitForStatement(org.client, org.organizationId, first);
    await expect(ALL, ['Counted Payor', 'Other Payor'], 'processed again');
    await act('delete', second);
    await expect(
      [
        { name: 'Counted Payor', statements: 1 },
        { name: 'Other Payor', statements: 1 },
      ],
      ['Counted Payor', 'Other Payor'],
      'the second deleted',
    );
    await act('restore', second);
    await expect(ALL, ['Counted Payor', 'Other Payor'], 'restored');
    const { rows } = await db.query(`SELECT upload_id FROM statements WHERE id = $1`, [first]);
    const del = await org.client.mutate('file.deleteFilesByIds', {
      organizationId: org.organizationId,
      uploadId: rows[0].upload_id,
      fileIds: [first],
    });
    if (!del.ok) throw new Error(JSON.stringify(del.error));
    await expect(
      [{ name: 'counted payor', statements: 1 }],
      ['counted payor'],
      'the first removed for good',
    );
  },
);
