// export.trigger, list, status, listFiles, downloadFile at the handler: validation with field
// paths and errorCodes, roles and data access, other organizations' ids, parts, the lifecycle
// with failure, retry safety, and the activity log.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, records, runExport, sha256, waitForExport } from './helpers.ts';
import { addJobUnchecked } from '../../helpers/jobs.ts';

const srv = await startTestHandler(t, { jobs: true, env: { EXPORT_PART_ROWS: '3' } });
const owner = await newOrganization(srv, 'Export Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const other = await newOrganization(srv, 'Other Export Org');
const otherDs = await seedDataset(srv, other.organizationId, 'Other ');
const both = [ds.rh1, ds.rh2];

const trigger = (input: Record<string, unknown>, caller = owner) =>
  caller.client.mutateUnchecked('export.trigger', {
    organizationId: caller.organizationId,
    ...input,
  });

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

/**
 * The objects under the prefix once they are `expected`: the objects an export does not keep go
 * right after its completion or failure is committed (never before: another attempt might win).
 */
async function objectsSettled(prefix: string, expected: string[], ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const keys = await objectsUnder(prefix);
    if (JSON.stringify(keys) === JSON.stringify([...expected].sort()) || Date.now() > deadline)
      return keys;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const activity = async (exportId: string) =>
  (
    await srv.deps.pool.query<{ action: string }>(
      `SELECT action FROM activity_events WHERE subject_type = 'export' AND subject_id = $1 ORDER BY id`,
      [exportId],
    )
  ).rows.map((r) => r.action);

t.test('trigger validates its input strictly, with field paths', async (t) => {
  const fails = async (input: Record<string, unknown>, path: string) => {
    const res = await trigger({
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: both,
      ...input,
    });
    t.match(
      res,
      {
        ok: false,
        error: { data: { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED', httpStatus: 400 } },
      },
      path,
    );
    if (!res.ok)
      t.ok(
        res.error.data.fields?.some((f) => f.path === path),
        `${path} in ${JSON.stringify(res.error.data.fields)}`,
      );
  };
  await fails({ type: 'everything' }, 'type');
  await fails({ format: 'pdf' }, 'format');
  await fails({ rightsholderIds: [] }, 'rightsholderIds');
  await fails({ rightsholderIds: ['not-a-uuid'] }, 'rightsholderIds.0');
  await fails({ rightsholderIds: Array.from({ length: 1001 }, () => ds.rh1) }, 'rightsholderIds');
  await fails(
    { filters: { statementPeriod: { from: '2024-05', to: '2024-01' } } },
    'filters.statementPeriod',
  );
  await fails(
    { filters: { statementPeriod: { from: '2024-13' } } },
    'filters.statementPeriod.from',
  );
  await fails({ filters: { territories: ['USA'] } }, 'filters.territories.0');
  await fails(
    { filters: { sources: Array.from({ length: 1001 }, (_, i) => `s${i}`) } },
    'filters.sources',
  );
  await fails({ filters: { sources: ['x'.repeat(201)] } }, 'filters.sources.0');
  await fails({ filters: { sources: ['ok', 'lone \ud800 surrogate'] } }, 'filters.sources.1');
  await fails({ filters: { rows: 5 } }, 'filters');
  const statementsWithRowFilter = await trigger({
    type: 'statements',
    format: 'csv',
    rightsholderIds: both,
    filters: { territories: ['US'] },
  });
  t.match(statementsWithRowFilter, {
    ok: false,
    error: { data: { code: 'BAD_REQUEST', errorCode: 'EXPORT_FILTER_NOT_APPLICABLE' } },
  });
  const catalogWithFilter = await trigger({
    type: 'catalog',
    format: 'csv',
    rightsholderIds: both,
    filters: { statementIds: [ds.s1] },
  });
  t.match(catalogWithFilter, {
    ok: false,
    error: { data: { code: 'BAD_REQUEST', errorCode: 'EXPORT_FILTER_NOT_APPLICABLE' } },
  });
});

t.test("another organization's ids answer NOT_FOUND", async (t) => {
  const base = { type: 'royalty_lines', format: 'csv' };
  t.match(await trigger({ ...base, rightsholderIds: [ds.rh1, otherDs.rh1] }), {
    ok: false,
    error: { data: { code: 'NOT_FOUND', errorCode: 'RIGHTSHOLDER_NOT_FOUND' } },
  });
  t.match(
    await trigger({ ...base, rightsholderIds: both, filters: { statementIds: [otherDs.s1] } }),
    {
      ok: false,
      error: { data: { code: 'NOT_FOUND', errorCode: 'STATEMENT_NOT_FOUND' } },
    },
  );
  t.match(
    await trigger({ ...base, rightsholderIds: both, filters: { distributorIds: [otherDs.d1] } }),
    {
      ok: false,
      error: { data: { code: 'NOT_FOUND', errorCode: 'DISTRIBUTOR_NOT_FOUND' } },
    },
  );
  const theirs = await runExport(other.client, other.organizationId, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: [otherDs.rh1],
  });
  t.equal(theirs.status, 'completed');
  const [file] = (
    await other.client.query('export.listFiles', {
      organizationId: other.organizationId,
      exportId: theirs.id,
    })
  ).data.files;
  const notFound = {
    ok: false,
    error: { data: { code: 'NOT_FOUND', errorCode: 'EXPORT_NOT_FOUND', httpStatus: 404 } },
  };
  t.match(
    await owner.client.query('export.status', { organizationId: org, exportId: theirs.id }),
    notFound,
  );
  t.match(
    await owner.client.query('export.listFiles', { organizationId: org, exportId: theirs.id }),
    notFound,
  );
  t.match(
    await owner.client.mutate('export.downloadFile', {
      organizationId: org,
      exportId: theirs.id,
      fileId: file.id,
    }),
    notFound,
  );
  const mine = await runExport(owner.client, org, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: [ds.rh2],
  });
  t.match(
    await owner.client.mutate('export.downloadFile', {
      organizationId: org,
      exportId: mine.id,
      fileId: file.id,
    }),
    {
      ok: false,
      error: { data: { code: 'NOT_FOUND', errorCode: 'EXPORT_FILE_NOT_FOUND' } },
    },
  );
  const listed = await owner.client.query('export.list', {
    organizationId: org,
    pagination: { limit: 2000 },
  });
  t.notOk(listed.data.data.some((e: { id: string }) => e.id === theirs.id));
});

t.test(
  'roles and data access: members export what they may see, and see only such exports',
  async (t) => {
    const stranger = await outsider(srv, org);
    t.match(
      await trigger({ type: 'royalty_lines', format: 'csv', rightsholderIds: both }, stranger),
      { ok: false, error: { data: { errorCode: 'NOT_ORGANIZATION_MEMBER' } } },
    );
    const member = await addMember(srv, org, 'member');
    const restricted = await addMember(srv, org, 'member');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, restricted.userId, [ds.rh2]],
    );
    t.match(
      await trigger({ type: 'royalty_lines', format: 'csv', rightsholderIds: both }, restricted),
      {
        ok: false,
        error: { data: { code: 'NOT_FOUND', errorCode: 'RIGHTSHOLDER_NOT_FOUND' } },
      },
    );
    t.match(
      await trigger(
        {
          type: 'royalty_lines',
          format: 'csv',
          rightsholderIds: [ds.rh2],
          filters: { statementIds: [ds.s1] },
        },
        restricted,
      ),
      {
        ok: false,
        error: { data: { errorCode: 'STATEMENT_NOT_FOUND' } },
      },
    );
    const own = await runExport(restricted.client, org, {
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: [ds.rh2],
    });
    t.equal(own.rowCount, 1);
    const rows = records(
      await Promise.all(
        (await downloadAll(restricted.client, org, own.id)).map((f) => readTable('csv', f.bytes)),
      ),
    );
    t.same(
      rows.map((r) => r.track_title_raw),
      ['Golf'],
    );
    const wide = await runExport(member.client, org, {
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: both,
    });
    t.equal(wide.rowCount, 7, 'a plain member exports everything');
    t.match(
      await restricted.client.query('export.status', { organizationId: org, exportId: wide.id }),
      { ok: false, error: { data: { errorCode: 'EXPORT_NOT_FOUND' } } },
    );
    const seen = await restricted.client.query('export.list', {
      organizationId: org,
      pagination: { limit: 2000 },
    });
    t.ok(seen.data.data.length >= 1);
    t.ok(
      seen.data.data.every((e: { rightsholderIds: string[] }) =>
        e.rightsholderIds.every((id) => id === ds.rh2),
      ),
      'only exports within their access',
    );
    t.ok(seen.data.data.some((e: { id: string }) => e.id === own.id));
    // a platform operator acts in every organization without a membership: their export completes
    for (const role of ['c2_customer_support', 'c2_superadmin'] as const) {
      const operator = await outsider(srv, org, role);
      const done = await runExport(operator.client, org, {
        type: 'royalty_lines',
        format: 'csv',
        rightsholderIds: both,
      });
      t.match(done, { status: 'completed', rowCount: 7 }, role);
    }
    // also with a disabled membership there: the API lets them in by their platform role, and so does the job
    const disabledOperator = await addMember(srv, org, 'member', {
      platformRole: 'c2_customer_support',
      status: 'disabled',
    });
    const byDisabled = await runExport(disabledOperator.client, org, {
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: both,
    });
    t.match(
      byDisabled,
      { status: 'completed', rowCount: 7, errorCode: null, reason: null },
      'an operator with a disabled membership',
    );
    // a disabled plain member is refused by the API, and an export of theirs that runs after they were disabled fails
    const disabled = await addMember(srv, org, 'member');
    const first = await runExport(disabled.client, org, {
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: both,
    });
    await srv.deps.pool.query(
      `UPDATE memberships SET status = 'disabled' WHERE organization_id = $1 AND user_id = $2`,
      [org, disabled.userId],
    );
    t.match(
      await trigger({ type: 'royalty_lines', format: 'csv', rightsholderIds: both }, disabled),
      { ok: false, error: { data: { errorCode: 'MEMBER_DISABLED' } } },
    );
    await srv.deps.pool.query(`UPDATE exports SET status = 'queued' WHERE id = $1`, [first.id]);
    await srv.deps.pool.query('DELETE FROM export_files WHERE export_id = $1', [first.id]);
    await addJobUnchecked(srv.deps.pool, 'export_build', {
      organizationId: org,
      exportId: first.id,
    });
    t.match(await waitForExport(owner.client, org, first.id), {
      status: 'failed',
      errorCode: 'EXPORT_ACCESS_REVOKED',
    });
  },
);

t.test('lifecycle, parts, files, download and activity', async (t) => {
  const res = await trigger({
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: [ds.rh2, ds.rh1, ds.rh1],
  });
  t.equal(res.ok, true);
  t.equal(res.data.status, 'queued');
  t.match(res.data.export, {
    id: res.data.exportId,
    type: 'royalty_lines',
    format: 'csv',
    status: 'queued',
    rightsholderIds: [...both].sort(),
    partRows: 3,
    errorCode: null,
  });
  const done = await waitForExport(owner.client, org, res.data.exportId);
  t.match(done, {
    status: 'completed',
    rowCount: 7,
    progress: { done: 7, total: 7 },
    errorCode: null,
    reason: null,
  });
  t.ok(done.startedAt && done.finishedAt);
  const listing = await owner.client.query('export.listFiles', {
    organizationId: org,
    exportId: done.id,
  });
  const files = listing.data.files;
  t.equal(files.length, done.fileCount);
  t.ok(files.length >= 3, 'seven rows in parts of at most three');
  t.same(
    files.map((f: { part: number }) => f.part),
    files.map((_: unknown, i: number) => i + 1),
  );
  t.ok(files.every((f: { rowCount: number }) => f.rowCount >= 1 && f.rowCount <= 3));
  t.equal(
    files.reduce((n: number, f: { rowCount: number }) => n + f.rowCount, 0),
    7,
  );
  t.equal(
    files.reduce((n: number, f: { sizeBytes: number }) => n + f.sizeBytes, 0),
    done.totalBytes,
  );
  t.match(files[0], {
    fileName: `royalty_lines-${done.id.slice(0, 8)}-part-0001.csv`,
    contentType: 'text/csv; charset=utf-8',
    sha256: /^[0-9a-f]{64}$/,
  });
  const link = await owner.client.mutate('export.downloadFile', {
    organizationId: org,
    exportId: done.id,
    fileId: files[0].id,
  });
  t.equal(link.ok, true);
  t.match(link.data, { fileName: files[0].fileName, url: /X-Amz-Signature=/ });
  const ttl = Date.parse(link.data.expiresAt) - Date.now();
  t.ok(ttl > 9 * 60_000 && ttl <= 10 * 60_000, 'a ten-minute URL');
  t.match(decodeURIComponent(link.data.url), /response-content-disposition=attachment/);
  const downloaded = await downloadAll(owner.client, org, done.id);
  const tables = downloaded.map((d) => readTable('csv', d.bytes));
  const parsed = await Promise.all(tables);
  t.same(
    parsed.map((p) => p.rows.length),
    files.map((f: { rowCount: number }) => f.rowCount),
    'each part holds its listed row count',
  );
  t.ok(downloaded.every((d) => sha256(d.bytes) === d.file.sha256));
  // parts are consecutive ranges of (rightsholder, statement, source row)
  const ranges = parsed.map((p) =>
    records([p])
      .map((r) => [r.rightsholder_id, r.statement_id, r.source_row!.padStart(6, '0')].join('|'))
      .sort(),
  );
  for (let i = 1; i < ranges.length; i++)
    t.ok(ranges[i - 1]!.at(-1)! < ranges[i]![0]!, `part ${i} ends before part ${i + 1} starts`);
  t.equal(new Set(ranges.flat()).size, 7, 'every row once');
  // each attempt writes under a prefix of its own (two attempts at once cannot overwrite each other)
  t.same(
    await objectsUnder(`orgs/${org}/exports/${done.id}/`),
    files
      .map((f: { fileName: string }) => `orgs/${org}/exports/${done.id}/attempt-1/${f.fileName}`)
      .sort(),
  );
  t.same(await activity(done.id), [
    'export.trigger',
    'export.completed',
    'export.downloadFile',
    ...files.map(() => 'export.downloadFile'),
  ]);

  const xlsx = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'xlsx',
    rightsholderIds: both,
  });
  t.equal(xlsx.partRows, 3);
  t.ok(xlsx.fileCount >= 3);
  const statuses = await owner.client.query('export.list', {
    organizationId: org,
    status: ['completed'],
    type: ['royalty_lines'],
    pagination: { page: 1, limit: 1, sortOrder: 'desc' },
  });
  t.match(statuses.data, {
    data: [{ id: xlsx.id }],
    pagination: { page: 1, limit: 1, hasNext: true, hasPrev: false },
  });
  const oldest = await owner.client.query('export.list', {
    organizationId: org,
    pagination: { limit: 2000, sortBy: 'createdAt', sortOrder: 'asc' },
  });
  const times = oldest.data.data.map((e: { createdAt: string }) => e.createdAt);
  t.same(times, [...times].sort());
  // oldest first by default, as every list; sortOrder desc alone is followed too
  const desc = await owner.client.query('export.list', {
    organizationId: org,
    pagination: { page: 1, sortOrder: 'desc' },
  });
  t.same(
    desc.data.data.map((e: { createdAt: string }) => e.createdAt),
    [...times].reverse(),
  );
  const byDefault = await owner.client.query('export.list', { organizationId: org });
  t.same(
    byDefault.data.data.map((e: { createdAt: string }) => e.createdAt),
    times,
  );
  const byRows = await owner.client.query('export.list', {
    organizationId: org,
    pagination: { page: 1, sortBy: 'rowCount', sortOrder: 'desc' },
  });
  const rowCounts = byRows.data.data.map((e: { rowCount: number | null }) => e.rowCount);
  t.same(
    rowCounts,
    [...rowCounts].sort((a: number | null, b: number | null) => (b ?? -1) - (a ?? -1)),
  );
  t.match(
    await owner.client.query('export.list', {
      organizationId: org,
      pagination: { sortBy: 'name' },
    }),
    {
      ok: false,
      error: {
        data: { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' },
        message:
          'Invalid input: pagination.sortBy: sortBy must be one of: createdAt, startedAt, finishedAt, type, status, rowCount',
      },
    },
  );
  t.match(
    await owner.client.query('export.list', { organizationId: org, pagination: { limit: 2001 } }),
    { ok: false, error: { data: { errorCode: 'PAGINATION_LIMIT_EXCEEDED' } } },
  );
});

t.test('hostile filter values are data, never SQL', async (t) => {
  const done = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: both,
    filters: { sources: ["'; DROP TABLE facts; --", "x' OR '1'='1"] },
  });
  t.match(done, { status: 'completed', rowCount: 0, fileCount: 1 });
  const [file] = await downloadAll(owner.client, org, done.id);
  const table = await readTable('csv', file!.bytes);
  t.equal(table.rows.length, 0);
  t.equal(table.columns[0], 'statement_id', 'an empty export still has its header');
  const after = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: both,
  });
  t.equal(after.rowCount, 7, 'the facts are intact');
});

t.test('a failed export records its errorCode and reason, and leaves no file', async (t) => {
  const leaving = await addMember(srv, org, 'member');
  const first = await runExport(leaving.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: both,
  });
  // the export runs again (a retry) after its member left, with a stray object of an earlier attempt there
  await srv.deps.pool.query(`UPDATE exports SET status = 'queued' WHERE id = $1`, [first.id]);
  await srv.deps.pool.query('DELETE FROM export_files WHERE export_id = $1', [first.id]);
  await srv.deps.pool.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    org,
    leaving.userId,
  ]);
  await srv.deps.store.put(
    `orgs/${org}/exports/${first.id}/royalty_lines-partial.csv`,
    'half,a,file',
  );
  await addJobUnchecked(srv.deps.pool, 'export_build', { organizationId: org, exportId: first.id });
  const res = { data: { exportId: first.id } };
  const failed = await waitForExport(owner.client, org, res.data.exportId);
  t.match(failed, {
    status: 'failed',
    errorCode: 'EXPORT_ACCESS_REVOKED',
    reason: /no longer has access/,
  });
  t.same(
    (await owner.client.query('export.listFiles', { organizationId: org, exportId: failed.id }))
      .data,
    { exportId: failed.id, status: 'failed', files: [] },
  );
  t.same(await objectsSettled(`orgs/${org}/exports/${failed.id}/`, []), [], 'no object stays');
  t.same(await activity(failed.id), ['export.trigger', 'export.completed', 'export.failed']);
});

t.test('a retried job neither duplicates nor leaves partial files', async (t) => {
  const done = await runExport(owner.client, org, {
    type: 'earnings_summary',
    format: 'parquet',
    rightsholderIds: both,
  });
  const before = (
    await owner.client.query('export.listFiles', { organizationId: org, exportId: done.id })
  ).data.files;
  // a duplicate delivery of the finished job does nothing
  await addJobUnchecked(srv.deps.pool, 'export_build', { organizationId: org, exportId: done.id });
  // a crashed attempt: the export left running, with an extra object of a part the retry will not make
  const second = await runExport(owner.client, org, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: both,
  });
  const prefix = `orgs/${org}/exports/${second.id}/`;
  await srv.deps.pool.query(`UPDATE exports SET status = 'running' WHERE id = $1`, [second.id]);
  await srv.deps.pool.query('DELETE FROM export_files WHERE export_id = $1', [second.id]);
  await srv.deps.store.put(
    `${prefix}attempt-1/earnings_summary-${second.id.slice(0, 8)}-part-0099.csv`,
    'partial',
  );
  await addJobUnchecked(srv.deps.pool, 'export_build', {
    organizationId: org,
    exportId: second.id,
  });
  const again = await waitForExport(owner.client, org, second.id);
  t.equal(again.status, 'completed');
  t.equal(again.rowCount, second.rowCount);
  const files = (
    await owner.client.query('export.listFiles', { organizationId: org, exportId: second.id })
  ).data.files;
  t.equal(files.length, second.fileCount);
  const kept = files.map((f: { fileName: string }) => `${prefix}attempt-2/${f.fileName}`);
  t.same(await objectsSettled(prefix, kept), kept.sort(), 'the stray part is gone');
  const rows = records(
    await Promise.all(
      (await downloadAll(owner.client, org, second.id)).map((d) => readTable('csv', d.bytes)),
    ),
  );
  t.equal(rows.length, second.rowCount, 'no duplicate rows');
  await new Promise((r) => setTimeout(r, 500));
  t.same(
    (await owner.client.query('export.listFiles', { organizationId: org, exportId: done.id })).data
      .files,
    before,
    'the finished export is untouched',
  );
  const { rows: attempts } = await srv.deps.pool.query<{ attempts: number }>(
    'SELECT attempts FROM exports WHERE id = $1',
    [done.id],
  );
  t.equal(attempts[0]!.attempts, 1);
});
