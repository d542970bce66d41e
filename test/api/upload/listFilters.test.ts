// upload.statements and file.list at the handler: every filter, pagination and sorting, deleted
// statements, other organizations' ids, restricted members and hostile strings, with exact answers.
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Filters Label');
const org = owner.organizationId;
const other = await newOrganization(srv, 'Other Label');
const alpha = await createRightsholder(owner.client, org, 'Alpha');
const beta = await createRightsholder(owner.client, org, 'Beta');
await insertMapping(srv.deps.pool, org, 'Filters layout', EUR_REPORT_HEADER, eurReportFields);
const dist = (
  await owner.client.mutate('distributor.create', {
    organizationId: org,
    name: 'Filters Distributor',
  })
).data.id as string;
const csv = (net: string) =>
  Buffer.from(`${EUR_REPORT_HEADER.join(',')}\n2024-03,Spotify,Song,USRC12400001,US,1,${net}\n`);

// four statements: a_march (alpha, custom "Q1", distributor), a_100%_april (alpha), b_march (beta), b_deleted (beta, deleted)
const s1 = await putFile(owner.client, org, alpha, 'a_march.csv', csv('1.00'), {
  customName: 'Q1',
  distributorId: dist,
});
const s2 = await putFile(owner.client, org, alpha, 'a_100%_april.csv', csv('2.00'));
const s3 = await putFile(owner.client, org, beta, 'B_MARCH.csv', csv('3.00'));
const s4 = await putFile(owner.client, org, beta, 'b_deleted.csv', csv('4.00'));
for (const s of [s1, s2, s3, s4]) await waitForStatement(owner.client, org, s.statementId);
await owner.client.mutate('upload.uploadAction', {
  organizationId: org,
  action: { type: 'delete', statementId: s4.statementId },
});
const all = [s1, s2, s3].map((s) => s.statementId);

const statements = (
  input: Record<string, unknown> = {},
  client = owner.client,
  organizationId = org,
) => client.mutate('upload.statements', { organizationId, ...input });
const files = (input: Record<string, unknown> = {}, client = owner.client) =>
  client.query('file.list', { organizationId: org, ...input });
const ids = (res: any) => (res.data.items ?? res.data.data).map((i: any) => i.id);

t.test('upload.statements: every filter', async (t) => {
  const res = await statements();
  t.same(
    [ids(res), res.data.totalFiles, res.data.pagination],
    [all, 3, { page: 1, limit: 300, total: 3, totalPages: 1, hasNext: false, hasPrev: false }],
  );
  t.same(ids(await statements({ rightsholderId: beta })), [s3.statementId]);
  t.same(ids(await statements({ customName: 'Q1' })), [s1.statementId]);
  t.same(
    ids(await statements({ filter: { fileName: 'MARCH' } })),
    [s1.statementId, s3.statementId],
    'case-insensitive',
  );
  t.same(
    ids(await statements({ filter: { fileName: '100%' } })),
    [s2.statementId],
    '% is a character',
  );
  t.same(
    ids(await statements({ filter: { fileName: '_' } })),
    all,
    '_ is a character (every name has one)',
  );
  t.same(ids(await statements({ filter: { fileName: "'; DROP TABLE statements; --" } })), []);
  t.same(
    ids(await statements({ filter: { statementIds: [s2.statementId, s4.statementId] } })),
    [s2.statementId],
    'deleted hidden',
  );
  t.same(
    ids(
      await statements({
        filter: { statementIds: [s2.statementId, s4.statementId], includeDeleted: true },
      }),
    ),
    [s2.statementId, s4.statementId],
  );
  t.same(ids(await statements({ filter: { uploadId: s3.uploadId } })), [s3.statementId]);
  t.same(ids(await statements({ filter: { statementStatus: ['processed'] } })), all);
  // naming the status deleted shows them (before: nothing, unless includeDeleted too)
  t.same(ids(await statements({ filter: { statementStatus: ['deleted'] } })), [s4.statementId]);
  t.same(
    ids(
      await statements({ filter: { statementStatus: ['deleted', 'processed'], fileName: 'b_' } }),
    ),
    [s3.statementId, s4.statementId],
  );
  isError(
    t,
    await statements({ filter: { statementStatus: ['gone'] } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await statements({ filter: { fileName: 'x'.repeat(256) } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await statements({ filter: { statementIds: ['1 OR 1=1'] } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('upload.statements: pagination and sorting', async (t) => {
  const page2 = await statements({ pagination: { page: 2, limit: 2 } });
  t.same(
    [ids(page2), page2.data.totalFiles, page2.data.pagination],
    [
      [s3.statementId],
      3,
      { page: 2, limit: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true },
    ],
  );
  t.same(ids(await statements({ pagination: { page: 5, limit: 2 } })), []);
  t.same(ids(await statements({ pagination: { sortBy: 'fileName' } })), [
    s2.statementId,
    s1.statementId,
    s3.statementId,
  ]);
  t.same(
    ids(await statements({ pagination: { sortBy: 'createdAt', sortOrder: 'desc' } })),
    [...all].reverse(),
  );
  isError(
    t,
    await statements({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await statements({ pagination: { sortBy: 'organization_id' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('file.list: every filter and pagination; deleted files are not listed', async (t) => {
  const res = await files();
  t.same([ids(res), res.data.pagination.total], [all, 3]);
  t.same(ids(await files({ filters: { fileId: [s1.statementId, s4.statementId] } })), [
    s1.statementId,
  ]);
  t.same(ids(await files({ filters: { rightsholderId: alpha } })), [
    s1.statementId,
    s2.statementId,
  ]);
  t.same(ids(await files({ filters: { distributorId: dist } })), [s1.statementId]);
  t.same(ids(await files({ filters: { customName: 'Q1' } })), [s1.statementId]);
  t.same(ids(await files({ filters: { name: 'march' } })), [s1.statementId, s3.statementId]);
  t.same(ids(await files({ filters: { name: '%' } })), [s2.statementId]);
  t.same(ids(await files({ filters: { dateStart: '2000-01-01', dateEnd: '2000-12-31' } })), []);
  t.same(
    ids(await files({ pagination: { sortBy: 'name', sortOrder: 'desc', limit: 1, page: 2 } })),
    [s1.statementId],
  );
});

t.test('other organizations and restricted members', async (t) => {
  t.same(
    ids(await statements({ filter: { statementIds: all } }, other.client, other.organizationId)),
    [],
  );
  t.same(ids(await statements({ rightsholderId: alpha }, other.client, other.organizationId)), []);
  // their key names their organization: ours in the input is refused
  isError(t, await statements({}, other.client), 'BAD_REQUEST', 'ORGANIZATION_MISMATCH');
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [beta]],
  );
  t.same(ids(await statements({ filter: { includeDeleted: true } }, restricted.client)), [
    s3.statementId,
    s4.statementId,
  ]);
  t.same(ids(await statements({ rightsholderId: alpha }, restricted.client)), []);
  t.same(ids(await files({ filters: { fileId: all } }, restricted.client)), [s3.statementId]);
});

t.test(
  'customName: trimmed as it is stored, a case-insensitive substring like the name filters, its characters literal',
  async (t) => {
    // stored trimmed: '100%_Batch\Q2'
    const odd = await putFile(owner.client, org, alpha, 'odd.csv', csv('5.00'), {
      customName: '  100%_Batch\\Q2 ',
    });
    const long = await putFile(owner.client, org, alpha, 'long.csv', csv('6.00'), {
      customName: `${'y'.repeat(199)}Z`,
    });
    t.equal(
      (await statements({ filter: { statementIds: [odd.statementId] } })).data.items[0].customName,
      '100%_Batch\\Q2',
    );
    const both = async (customName: string) => {
      const a = ids(await statements({ customName }));
      const b = ids(await files({ filters: { customName } }));
      t.same(a, b, `${JSON.stringify(customName)}: upload.statements and file.list agree`);
      return a;
    };
    t.same(await both('  100%_Batch\\Q2 '), [odd.statementId], 'as given on upload');
    t.same(await both('100%_batch\\q2'), [odd.statementId], 'any case');
    t.same(await both('batch'), [odd.statementId], 'a part of it');
    t.same(await both('%'), [odd.statementId], '% is a character');
    t.same(await both('_'), [odd.statementId], '_ is a character');
    t.same(await both('\\'), [odd.statementId], 'a backslash is a character');
    t.same(await both('q'), [s1.statementId, odd.statementId]);
    t.same(await both('Q1'), [s1.statementId]);
    t.same(await both('%Q%'), []);
    t.same(await both(`${'y'.repeat(199)}z`), [long.statementId], 'the longest name stored');
    t.same(
      await both('   '),
      [...all, odd.statementId, long.statementId],
      'blank is no filter, as an empty name filter',
    );
    isError(
      t,
      await statements({ customName: 'y'.repeat(201) }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
    isError(
      t,
      await files({ filters: { customName: 'y'.repeat(201) } }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  },
);
