// The statement lifecycle at the handler: presigned upload, complete, processing by the job
// runner, needs_mapping and its release, actions, expiry, flags, files and their variants,
// with tenancy and data access enforced throughout.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import {
  expireUploads,
  sweepAbandonedObjects,
} from '../../../src/jobs/tasks/statement_upload_expire.ts';
import { attachmentDisposition } from '../../../src/storage/objectStore.ts';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Lifecycle Label');
const org = owner.organizationId;
const other = await newOrganization(srv, 'Other Label');
const artist = await createRightsholder(owner.client, org, 'Lifecycle Artist');
const second = await createRightsholder(owner.client, org, 'Second Artist');

// a statement layout of our own, with an organization mapping made as mapping.create would
const header = EUR_REPORT_HEADER;
const mappingFields = eurReportFields;
await insertMapping(srv.deps.pool, org, 'Lifecycle layout', header, mappingFields);

function csv(rows: string[][]): Buffer {
  return Buffer.from([header, ...rows].map((r) => r.join(',')).join('\n') + '\n');
}
const rows = [
  ['2024-03', 'Spotify', 'Summer Nights', 'US-RC1-24-00001', 'US', '1000', '3.125'],
  ['2024-03', 'Apple Music', 'Summer Nights', 'USRC12400001', 'DE', '200', '1.10'],
  ['2024-03', 'Deezer', 'Winter Song', 'FRXYZ2400002', 'FR', '50', '(0.25)'],
];

t.test(
  'uploadFile: a server-chosen key in the organization prefix, a short-lived presigned PUT',
  async (t) => {
    const res = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: '../../etc/passwd.csv',
      contentType: 'text/csv',
    });
    t.equal(res.ok, true);
    if (!res.ok) return;
    t.match(res.data, { method: 'PUT', headers: { 'content-type': 'text/csv' } });
    const url = new URL(res.data.url);
    t.match(
      decodeURIComponent(url.pathname),
      new RegExp(`/orgs/${org}/statements/${res.data.statementId}/original/[^/]*passwd\\.csv$`),
    );
    t.notMatch(decodeURIComponent(url.pathname), /\.\.\//);
    t.equal(url.searchParams.get('X-Amz-Expires'), '900');
    t.notOk(url.searchParams.has('x-amz-checksum-crc32'), 'no empty-body checksum is signed');
    const expires = new Date(res.data.expiresAt).getTime() - Date.now();
    t.ok(expires > 14 * 60_000 && expires <= 15 * 60_000);
    // completing before the bytes are there
    isError(
      t,
      await owner.client.mutate('upload.uploadAction', {
        organizationId: org,
        action: { type: 'complete', statementId: res.data.statementId },
      }),
      'BAD_REQUEST',
      'UPLOAD_OBJECT_MISSING',
    );
    // heartbeat extends it; then it is aborted and can no longer be completed
    const beat = await owner.client.mutate('upload.heartbeat', {
      organizationId: org,
      statementIds: [res.data.statementId, other.userId],
    });
    t.same(beat.ok && beat.data.notExtended, [other.userId]);
    t.equal(beat.ok && beat.data.extended[0]?.statementId, res.data.statementId);
    const aborted = await owner.client.mutate('upload.aborted', {
      organizationId: org,
      statementId: res.data.statementId,
      reason: 'user cancelled',
    });
    t.equal(aborted.ok && aborted.data.status, 'aborted');
    t.same(aborted.ok && aborted.data.failureReason, {
      errorCode: 'UPLOAD_ABORTED',
      message: 'user cancelled',
    });
    isError(
      t,
      await owner.client.mutate('upload.uploadAction', {
        organizationId: org,
        action: { type: 'complete', statementId: res.data.statementId },
      }),
      'CONFLICT',
      'STATEMENT_STATE_CONFLICT',
    );
    // the content type follows the extension; a name whose extension is no known one (even one an
    // object literal would find, `constructor`) is octet-stream
    const types: [string, string][] = [
      ['q1.XLSX', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
      ['x.constructor', 'application/octet-stream'],
      ['x.__proto__', 'application/octet-stream'],
      ['noext', 'application/octet-stream'],
    ];
    for (const [fileName, type] of types) {
      const r = await owner.client.mutate('upload.uploadFile', {
        organizationId: org,
        rightsholderId: artist,
        fileName,
      });
      t.same(r.ok && r.data.headers, { 'content-type': type }, fileName);
    }
  },
);

t.test('input checks: unknown or foreign rightsholder, upload and distributor ids', async (t) => {
  const otherArtist = await createRightsholder(
    other.client,
    other.organizationId,
    'Foreign Artist',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: otherArtist,
      fileName: 'a.csv',
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'a.csv',
      uploadId: other.userId,
    }),
    'NOT_FOUND',
    'UPLOAD_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'a.csv',
      distributorId: other.userId,
    }),
    'NOT_FOUND',
    'DISTRIBUTOR_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: '',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'x'.repeat(300),
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'a.csv',
      contentType: 'text/csv\r\nx-evil: 1',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  const reader = await addMember(srv, org, 'reader');
  isError(
    t,
    await reader.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'a.csv',
    }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
});

let processedId = '';
let processedUpload = '';

t.test('complete → processed by the job runner, exactly', async (t) => {
  const up = await putFile(owner.client, org, artist, 'march.csv', csv(rows), {
    customName: 'March',
  });
  processedId = up.statementId;
  processedUpload = up.uploadId;
  const s = await waitForStatement(owner.client, org, up.statementId);
  t.match(s, {
    id: up.statementId,
    uploadId: up.uploadId,
    rightsholderId: artist,
    fileName: 'march.csv',
    customName: 'March',
    status: 'processed',
    headerHash: computeHeaderHash(header),
    rowCount: 3,
    keptRows: 3,
    removedRows: 0,
    progress: { done: 3, total: 3 },
    stmtYear: 2024,
    stmtPeriod: 3,
    stmtCadence: 'M',
    currency: 'EUR',
    netEarnings: '3.975000000000',
    units: '1250.000000000000',
    failureReason: null,
  });
  t.same(
    s.variants,
    ['normalized', 'original', 'removed'],
    'trimmed and standardized are made on first request',
  );
  // the shipped rates start in July 2024: no EUR rate on or before 2024-03-31, so no conversion at all
  const fx = await srv.deps.pool.query(
    'SELECT rate::text FROM statement_fx WHERE statement_id = $1',
    [up.statementId],
  );
  t.same(fx.rows, [], 'never converted at 1');
  t.match(
    s.flags.find((f: any) => f.kind === 'missing_fx_rate'),
    { severity: 'error', details: { currencies: ['EUR'], date: '2024-03-31' } },
  );
  // the same bytes again: a duplicate, flagged
  const dup = await putFile(owner.client, org, artist, 'march-again.csv', csv(rows), {
    uploadId: up.uploadId,
  });
  const d = await waitForStatement(owner.client, org, dup.statementId);
  t.equal(d.status, 'processed');
  const flag = d.flags.find((f: any) => f.kind === 'duplicate_upload');
  t.match(flag, {
    severity: 'warning',
    resolved: false,
    shown: true,
    details: { statementId: up.statementId },
  });

  // flags: show/hide, resolve one, resolve all
  const hidden = await owner.client.mutate('upload.setFlagShown', {
    organizationId: org,
    uploadId: up.uploadId,
    statementId: dup.statementId,
    flagId: flag.id,
    shown: false,
  });
  t.equal(hidden.ok && hidden.data.flags.find((f: any) => f.id === flag.id)?.shown, false);
  const resolved = await owner.client.mutate('upload.resolveFlag', {
    organizationId: org,
    uploadId: up.uploadId,
    statementId: dup.statementId,
    flagId: flag.id,
  });
  t.equal(resolved.ok && resolved.data.flags.find((f: any) => f.id === flag.id)?.resolved, true);
  isError(
    t,
    await owner.client.mutate('upload.resolveFlag', {
      organizationId: org,
      uploadId: up.uploadId,
      statementId: dup.statementId,
      flagId: other.userId,
    }),
    'NOT_FOUND',
    'FLAG_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('upload.resolveFlag', {
      organizationId: org,
      uploadId: other.userId,
      statementId: dup.statementId,
      flagId: flag.id,
    }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  const all = await owner.client.mutate('upload.resolveAllFlags', {
    organizationId: org,
    uploadId: up.uploadId,
    statementId: dup.statementId,
  });
  t.ok(all.ok && all.data.flags.every((f: any) => f.resolved));
  // a resolved flag stays resolved when the statement is processed again
  await owner.client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type: 'reprocess', statementId: dup.statementId },
  });
  const again = await waitForStatement(owner.client, org, dup.statementId);
  t.notOk(again.flags.some((f: any) => f.kind === 'duplicate_upload' && !f.resolved));
});

t.test(
  "the USD rate is the one of the period's last day, else the nearest earlier published day",
  async (t) => {
    const up = await putFile(
      owner.client,
      org,
      artist,
      'august.csv',
      csv([['2024-08', 'Spotify', 'Summer Nights', 'USRC12400001', 'US', '10', '2.00']]),
    );
    const s = await waitForStatement(owner.client, org, up.statementId);
    t.equal(s.status, 'processed');
    t.notOk(s.flags.some((f: any) => f.kind === 'missing_fx_rate'));
    const fx = await srv.deps.pool.query<{ currency: string; rate: string; rate_date: string }>(
      `SELECT currency, rate::text, to_char(rate_date, 'YYYY-MM-DD') AS rate_date FROM statement_fx WHERE statement_id = $1`,
      [up.statementId],
    );
    // 2024-08-31 was a Saturday: the ECB published last on Friday the 30th
    t.equal(fx.rows.length, 1);
    t.match(fx.rows[0], { currency: 'EUR', rate_date: '2024-08-30' });
    const published = await srv.deps.pool.query<{ rate: string }>(
      `SELECT usd_per_unit::text AS rate FROM fx_rates WHERE currency = 'EUR' AND rate_date = '2024-08-30'`,
    );
    t.equal(fx.rows[0]!.rate, published.rows[0]!.rate);
    t.not(fx.rows[0]!.rate, '1');
  },
);

t.test(
  'unknown headers wait in needs_mapping with a suggestion; a mapping and the callback release them',
  async (t) => {
    const layout = ['Month', 'Platform', 'Song', 'Amount USD'];
    const bytes = Buffer.from(
      `${layout.join(';')}\n2024-04;Spotify;Tune;1,50\n2024-04;YouTube;Tune;2,25\n`,
    );
    const up = await putFile(owner.client, org, second, 'april.csv', bytes);
    const s = await waitForStatement(owner.client, org, up.statementId);
    t.equal(s.status, 'needs_mapping');
    t.equal(s.headerHash, computeHeaderHash(layout));
    t.ok(s.suggestedMapping?.fields?.royaltyEarnings, 'a suggestion for the money column');
    const m = await srv.deps.pool.query<{ id: string }>(
      `INSERT INTO mappings (organization_id, name, headers, header_hash, fields) VALUES ($1, 'April', $2, $3, $4) RETURNING id`,
      [
        org,
        layout,
        computeHeaderHash(layout),
        JSON.stringify({
          stmtYear: { column: 'Month' },
          stmtPeriod: { column: 'Month' },
          stmtCadence: { constant: 'M' },
          currency: { constant: 'USD' },
          royaltyEarnings: { column: 'Amount USD' },
          source: { column: 'Platform' },
        }),
      ],
    );
    isError(
      t,
      await owner.client.mutate('upload.callback', {
        organizationId: org,
        type: 'mapping_created',
        mapping_id: m.rows[0]!.id,
        file_id: processedId,
      }),
      'CONFLICT',
      'STATEMENT_NOT_WAITING',
    );
    // a statement that does not exist, or is another organization's, is not found (not "not waiting")
    isError(
      t,
      await owner.client.mutate('upload.callback', {
        organizationId: org,
        type: 'mapping_created',
        mapping_id: m.rows[0]!.id,
        file_id: '0b9c3f1e-5d2a-4c1b-9a8e-7f6d5c4b3a21',
      }),
      'NOT_FOUND',
      'STATEMENT_NOT_FOUND',
    );
    const library = await srv.deps.pool.query<{ id: string }>(
      'SELECT id FROM mappings WHERE organization_id IS NULL ORDER BY id LIMIT 1',
    );
    isError(
      t,
      await other.client.mutate('upload.callback', {
        organizationId: other.organizationId,
        type: 'mapping_created',
        mapping_id: library.rows[0]!.id,
        file_id: up.statementId,
      }),
      'NOT_FOUND',
      'STATEMENT_NOT_FOUND',
    );
    t.equal(
      (await waitForStatement(owner.client, org, up.statementId)).status,
      'needs_mapping',
      'still waiting',
    );
    const cb = await owner.client.mutate('upload.callback', {
      organizationId: org,
      type: 'mapping_created',
      mapping_id: m.rows[0]!.id,
      upload_id: up.uploadId,
    });
    t.same(cb.ok && cb.data, { statementIds: [up.statementId], status: 'queued' });
    const done = await waitForStatement(owner.client, org, up.statementId);
    t.equal(done.status, 'processed');
    t.equal(done.netEarnings, '3.750000000000', 'decimal commas read as decimals');
    isError(
      t,
      await owner.client.mutate('upload.callback', {
        organizationId: org,
        type: 'x',
        mapping_id: other.userId,
      }),
      'NOT_FOUND',
      'MAPPING_NOT_FOUND',
    );
  },
);

t.test('bad files fail their statement with a reason, never a retry storm', async (t) => {
  const html = await putFile(
    owner.client,
    org,
    artist,
    'report.csv',
    Buffer.from('<!DOCTYPE html><html><body>Please log in</body></html>'),
  );
  const s = await waitForStatement(owner.client, org, html.statementId);
  t.equal(s.status, 'failed');
  t.equal(s.failureReason.errorCode, 'FILE_IS_HTML');
  // the job marks the statement failed and then completes: graphile-worker removes its row a moment
  // after the status shows; a job that had thrown would stay, waiting for its retry
  let left = -1;
  for (let i = 0; i < 100 && left !== 0; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    left = (
      await srv.deps.pool.query(
        `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = $1`,
        [`statement_ingest:${html.statementId}`],
      )
    ).rows[0].n;
  }
  t.equal(left, 0, 'no job left to retry');
  const start = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'sized.csv',
    size: 10,
  });
  const put = await fetch(start.data.url, {
    method: 'PUT',
    headers: start.data.headers,
    body: 'twelve bytes',
  });
  t.equal(put.status, 200);
  isError(
    t,
    await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'complete', statementId: start.data.statementId },
    }),
    'BAD_REQUEST',
    'UPLOAD_SIZE_MISMATCH',
  );
});

t.test('unfinished uploads expire', async (t) => {
  const start = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'late.csv',
  });
  await srv.deps.pool.query(
    `UPDATE statements SET upload_expires_at = now() - interval '1 second' WHERE id = $1`,
    [start.data.statementId],
  );
  t.equal(await expireUploads(srv.deps), 1);
  const s = await waitForStatement(owner.client, org, start.data.statementId);
  t.equal(s.status, 'expired');
});

t.test(
  'a heartbeat renews the PUT URL; objects of abandoned uploads go once no URL of theirs works',
  async (t) => {
    const start = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'slow.csv',
    });
    const id = start.data.statementId;
    const beat = await owner.client.mutate('upload.heartbeat', {
      organizationId: org,
      statementIds: [id, id],
    });
    t.equal(beat.ok && beat.data.extended.length, 1, 'each statement once');
    const renewed = beat.data.extended[0];
    t.match(renewed, { statementId: id, method: 'PUT', headers: { 'content-type': 'text/csv' } });
    t.equal(new URL(renewed.url).searchParams.get('X-Amz-Expires'), '900');
    t.equal(
      (await fetch(renewed.url, { method: 'PUT', headers: renewed.headers, body: csv(rows) }))
        .status,
      200,
      'the renewed URL takes the bytes',
    );

    // aborted: its object is removed at once, but a PUT of a URL still alive brings one back
    t.equal(
      (await owner.client.mutate('upload.aborted', { organizationId: org, statementId: id })).data
        .status,
      'aborted',
    );
    t.equal(
      (await fetch(renewed.url, { method: 'PUT', headers: renewed.headers, body: csv(rows) }))
        .status,
      200,
    );
    const key = (await srv.deps.pool.query('SELECT object_key FROM statements WHERE id = $1', [id]))
      .rows[0].object_key;
    t.ok(await srv.deps.store.head(key), 'put back after the abort');
    t.equal(await sweepAbandonedObjects(srv.deps), 0, 'not while the URL lives');
    // an expired upload whose object arrived too late to be completed
    const late = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'later.csv',
    });
    t.equal(
      (await fetch(late.data.url, { method: 'PUT', headers: late.data.headers, body: csv(rows) }))
        .status,
      200,
    );
    await srv.deps.pool.query(
      `UPDATE statements SET upload_expires_at = now() - interval '1 second' WHERE id = $1`,
      [late.data.statementId],
    );
    t.equal(await expireUploads(srv.deps), 1);
    const lateKey = (
      await srv.deps.pool.query('SELECT object_key FROM statements WHERE id = $1', [
        late.data.statementId,
      ])
    ).rows[0].object_key;

    await srv.deps.pool.query(
      `UPDATE statements SET put_url_expires_at = now() - interval '2 minutes' WHERE id = ANY ($1)`,
      [[id, late.data.statementId]],
    );
    t.equal(await sweepAbandonedObjects(srv.deps), 2);
    t.equal(await srv.deps.store.head(key), undefined, 'the aborted upload leaves no object');
    t.equal(await srv.deps.store.head(lateKey), undefined, 'nor the expired one');
    t.equal(await sweepAbandonedObjects(srv.deps), 0, 'each is swept once');
  },
);

t.test('actions: skip, bad, delete and restore; statements filters', async (t) => {
  const act = (type: string) =>
    owner.client.mutateUnchecked('upload.uploadAction', {
      organizationId: org,
      action: { type, statementId: processedId },
    });
  t.equal((await act('skip')).data.status, 'skipped');
  t.equal((await act('bad')).data.status, 'bad');
  t.equal((await act('delete')).data.status, 'deleted');
  const hidden = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [processedId] },
  });
  t.same(hidden.data.items, []);
  const shown = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [processedId], includeDeleted: true },
  });
  t.equal(shown.data.items[0].status, 'deleted');
  t.equal((await act('restore')).data.status, 'bad');
  isError(t, await act('restore'), 'CONFLICT', 'STATEMENT_STATE_CONFLICT');
  t.equal((await act('reprocess')).data.status, 'uploaded');
  t.equal((await waitForStatement(owner.client, org, processedId)).status, 'processed');

  const byName = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { fileName: 'MARCH' },
  });
  t.same(byName.data.items.map((i: any) => i.fileName).sort(), ['march-again.csv', 'march.csv']);
  const literal = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { fileName: '%' },
  });
  t.same(literal.data.items, [], '% matches literally');
  const failed = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementStatus: ['failed'] },
  });
  t.same(
    failed.data.items.map((i: any) => i.fileName),
    ['report.csv'],
  );
  const page = await owner.client.mutate('upload.statements', {
    organizationId: org,
    rightsholderId: artist,
    pagination: { page: 1, limit: 2, sortBy: 'fileName' },
  });
  t.equal(page.data.items.length, 2);
  t.equal(page.data.totalFiles, page.data.pagination.total);
  t.match(page.data.pagination, { page: 1, limit: 2, hasPrev: false });
  const uploads = await owner.client.query('upload.list', {
    organizationId: org,
    filter: { search: 'april' },
  });
  t.equal(uploads.data.pagination.total, 1);
  t.match(uploads.data.data[0], { fileCount: 1, statusCounts: { processed: 1 } });
  // oldest first unless sortOrder asks otherwise (with or without sortBy), as every list
  const created = async (pagination?: object) =>
    (
      await owner.client.query('upload.list', {
        organizationId: org,
        ...(pagination ? { pagination } : {}),
      })
    ).data.data.map((u: any) => u.createdAt);
  const oldest = await created();
  t.ok(oldest.length >= 3);
  t.same(oldest, [...oldest].sort());
  for (const pagination of [{ page: 1 }, { page: 1, sortBy: 'createdAt', sortOrder: 'asc' }])
    t.same(await created(pagination), oldest);
  t.same(await created({ page: 1, sortOrder: 'desc' }), [...oldest].reverse());
  const byFiles = (
    await owner.client.query('upload.list', {
      organizationId: org,
      pagination: { page: 1, sortBy: 'fileCount', sortOrder: 'desc' },
    })
  ).data.data.map((u: any) => u.fileCount);
  t.same(
    byFiles,
    [...byFiles].sort((a: number, b: number) => b - a),
  );
  t.match(
    await owner.client.query('upload.list', {
      organizationId: org,
      pagination: { sortBy: 'name' },
    }),
    {
      ok: false,
      error: {
        data: { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' },
        message:
          'Invalid input: pagination.sortBy: sortBy must be one of: createdAt, updatedAt, fileCount',
      },
    },
  );
  // dates that are not dates are refused as input, never a database error
  for (const filter of [
    { date_start: '2024-13-45' },
    { date_end: '2024-02-30' },
    { date_start: '2024-01-01T99:99:99' },
    { date_end: "2024-01-01'; DROP TABLE statements; --" },
  ]) {
    isError(
      t,
      await owner.client.query('upload.list', { organizationId: org, filter }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  }
  for (const filters of [
    { dateStart: '2024-13-45' },
    { dateEnd: "2024-01-01'; DROP TABLE statements; --" },
    { dateStart: `2024-01-01${'x'.repeat(500)}` },
  ]) {
    isError(
      t,
      await owner.client.query('file.list', { organizationId: org, filters }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
  }
  const today = new Date().toISOString().slice(0, 10);
  t.equal(
    (
      await owner.client.query('upload.list', {
        organizationId: org,
        filter: { date_start: today, date_end: today },
      })
    ).data.pagination.total,
    oldest.length,
  );
  t.equal(
    (
      await owner.client.query('upload.list', {
        organizationId: org,
        filter: { date_start: `${today}T00:00:00Z`, date_end: '2000-01-01' },
      })
    ).data.pagination.total,
    0,
  );
  t.ok(
    (
      await owner.client.query('file.list', {
        organizationId: org,
        filters: { dateStart: today, dateEnd: today },
      })
    ).data.pagination.total >= oldest.length,
  );
});

t.test('other organizations and restricted members see nothing', async (t) => {
  for (const [path, input] of [
    ['upload.uploadAction', { action: { type: 'skip', statementId: processedId } }],
    ['upload.aborted', { statementId: processedId }],
    ['fileStorage.downloadStatementFile', { type: 'original', file: processedId }],
  ] as const) {
    isError(
      t,
      await other.client.mutate(path, { organizationId: other.organizationId, ...input }),
      'NOT_FOUND',
      'STATEMENT_NOT_FOUND',
    );
  }
  isError(
    t,
    await other.client.query('fileStorage.getSample', {
      organizationId: other.organizationId,
      type: 'normalized',
      file: processedId,
    }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  const foreign = await other.client.mutate('upload.statements', {
    organizationId: other.organizationId,
    filter: { statementIds: [processedId] },
  });
  t.same(foreign.data.items, []);
  const restricted = await addMember(srv, org, 'writer');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [second]],
  );
  const mine = await restricted.client.mutate('upload.statements', { organizationId: org });
  t.ok(mine.data.items.every((i: any) => i.rightsholderId === second));
  t.ok(mine.data.items.length >= 1);
  isError(
    t,
    await restricted.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'skip', statementId: processedId },
    }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  isError(
    t,
    await restricted.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'x.csv',
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
});

t.test('file variants: samples and presigned downloads', async (t) => {
  const sample = await owner.client.query('fileStorage.getSample', {
    organizationId: org,
    type: 'normalized',
    file: processedId,
    startRow: 1,
    endRow: 3,
  });
  t.equal(sample.ok, true);
  t.equal(sample.data.rows.length, 2);
  const col = (name: string) => sample.data.columns.indexOf(name);
  t.same(
    sample.data.rows.map((r: any[]) => [
      r[col('source_row')],
      r[col('royalty_earnings')],
      r[col('country')],
      r[col('isrc')],
    ]),
    [
      ['2', '1.100000000000', 'DE', 'USRC12400001'],
      ['3', '-0.250000000000', 'FR', 'FRXYZ2400002'],
    ],
  );
  const original = await owner.client.query('fileStorage.getSample', {
    organizationId: org,
    type: 'original',
    file: processedId,
  });
  t.same(original.data.rows[0], header, 'the original starts with its header line');
  t.equal(original.data.rows.length, 4);
  const trimmed = await owner.client.query('fileStorage.getSample', {
    organizationId: org,
    type: 'trimmed',
    file: processedId,
  });
  t.same(trimmed.data.columns, header);
  isError(
    t,
    await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'single',
      file: processedId,
    }),
    'NOT_FOUND',
    'FILE_VARIANT_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'normalized',
      file: processedId,
      startRow: 0,
      endRow: 6000,
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  const link = await owner.client.mutate('fileStorage.downloadStatementFile', {
    organizationId: org,
    type: 'original',
    file: processedId,
  });
  const res = await fetch(link.data.url);
  t.equal(await res.text(), csv(rows).toString());
  t.match(res.headers.get('content-disposition'), /attachment; filename="march.csv"/);
  // the name in both forms: ASCII, and UTF-8 percent-encoded to RFC 8187's characters
  t.equal(
    attachmentDisposition("Gebühren (Q1) l'été*.csv"),
    `attachment; filename="Geb_hren _Q1_ l_t_.csv"; filename*=UTF-8''Geb%C3%BChren%20%28Q1%29%20l%27%C3%A9t%C3%A9%2A.csv`,
  );
});

t.test('files: list, what a delete removes, and the delete itself', async (t) => {
  const listed = await owner.client.query('file.list', {
    organizationId: org,
    filters: { rightsholderId: artist, name: 'march' },
  });
  t.same(listed.data.data.map((f: any) => f.fileName).sort(), ['march-again.csv', 'march.csv']);
  // the rightsholder's catalog block, built from its processed statements by the job runner
  let block:
    { id: string; statements: number; details: number; tracks: number; albums: number } | undefined;
  for (let i = 0; i < 200; i++) {
    const { rows } = await srv.deps.pool.query(
      `SELECT b.id, (SELECT count(*) FROM jsonb_object_keys(b.source_versions))::int AS statements,
         (SELECT count(*) FROM musical_details d WHERE d.block_id = b.id)::int AS details,
         (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'track')::int AS tracks,
         (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'album')::int AS albums
       FROM catalog_blocks b WHERE b.rightsholder_id = $1 AND b.state = 'idle' AND b.source_versions ? $2`,
      [artist, processedId],
    );
    block = rows[0];
    if (block) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(block && block.details > 0, 'a catalog block was built from the statement');
  const info = await owner.client.query('file.getFilesDeleteInfo', {
    organizationId: org,
    uploadId: processedUpload,
    fileIds: [processedId],
  });
  t.match(info.data.totals, { files: 1, rows: 3 });
  t.same(info.data.blocks, [
    {
      id: block!.id,
      rightsholderId: artist,
      state: 'idle',
      statements: block!.statements,
      statementsRemoved: 1,
      musicalDetails: block!.details,
      refreshAfterDelete: true,
    },
  ]);
  t.same(info.data.catalogs, [
    {
      rightsholderId: artist,
      rightsholderName: 'Lifecycle Artist',
      blockId: block!.id,
      musicalDetails: block!.details,
      products: { tracks: block!.tracks, albums: block!.albums },
    },
  ]);
  t.ok(
    info.data.totals.objects >= 4,
    'original, normalized, removed and the trimmed file made on request',
  );
  isError(
    t,
    await owner.client.query('file.getFilesDeleteInfo', {
      organizationId: org,
      uploadId: processedUpload,
      fileIds: [other.userId],
    }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  const { rows: before } = await srv.deps.pool.query<{
    variants: Record<string, string>;
    object_key: string;
  }>('SELECT variants, object_key FROM statements WHERE id = $1', [processedId]);
  const keys = [before[0]!.object_key, ...Object.values(before[0]!.variants)];
  const del = await owner.client.mutate('file.deleteFilesByIds', {
    organizationId: org,
    uploadId: processedUpload,
    fileIds: [processedId],
  });
  t.same(del.data, {
    deleted: [processedId],
    objectsRemoved: new Set(keys).size,
    objectsFailed: 0,
  });
  for (const key of keys) t.equal(await srv.deps.store.head(key), undefined, `${key} removed`);
  const gone = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [processedId], includeDeleted: true },
  });
  t.same(gone.data.items, []);
});

t.test('removing a rightsholder removes its statements and their stored files', async (t) => {
  const { rows } = await srv.deps.pool.query<{ id: string }>(
    'SELECT id FROM statements WHERE rightsholder_id = $1',
    [second],
  );
  t.ok(rows.length >= 1);
  const { statementObjectKeys } = await import('../../../src/ingest/statements.ts');
  const keys = await statementObjectKeys(
    srv.deps.pool,
    rows.map((r) => r.id),
  );
  t.ok(keys.length >= 3);
  // (an empty removed-rows file is written on first request: its key is listed, no object yet)
  const stored: string[] = [];
  for (const key of keys) if (await srv.deps.store.head(key)) stored.push(key);
  t.ok(stored.length >= 2);
  const dry = await owner.client.mutate('rightsholder.deleteById', {
    organizationId: org,
    id: second,
    dryRun: true,
  });
  t.equal(dry.data.removed.statements, rows.length);
  for (const key of stored) t.ok(await srv.deps.store.head(key), 'a dry run removes nothing');
  const res = await owner.client.mutate('rightsholder.deleteById', {
    organizationId: org,
    id: second,
  });
  t.equal(res.data.removed.statements, rows.length);
  for (const key of keys) t.equal(await srv.deps.store.head(key), undefined, `${key} removed`);
});

t.test(
  'sources and sales types that no lookup resolves are flagged; known ones are not',
  async (t) => {
    const up = await putFile(
      owner.client,
      org,
      artist,
      'mystery.csv',
      csv([
        ['2024-05', 'Zorblax Music Hub', 'Odd Song', 'USRC12400009', 'US', '7', '0.70'],
        ['2024-05', 'Spotify', 'Odd Song', 'USRC12400009', 'US', '70', '0.21'],
      ]),
    );
    const s = await waitForStatement(owner.client, org, up.statementId);
    t.equal(s.status, 'processed');
    const flag = s.flags.find((f: any) => f.kind === 'unknown_sources');
    t.match(flag, { severity: 'warning', details: { values: ['Zorblax Music Hub'] } });
    const raw = await srv.deps.pool.query(
      'SELECT raw_value, row_count::int FROM statement_raw_values WHERE statement_id = $1 AND kind = $2 ORDER BY raw_value',
      [up.statementId, 'source'],
    );
    t.same(raw.rows, [
      { raw_value: 'Spotify', row_count: 1 },
      { raw_value: 'Zorblax Music Hub', row_count: 1 },
    ]);
  },
);

t.test(
  'a reprocess that fails leaves the previous rows in analytics, and its catalog block as it was',
  async (t) => {
    const third = await createRightsholder(owner.client, org, 'Reprocess Artist');
    const up = await putFile(
      owner.client,
      org,
      third,
      'kept.csv',
      csv([
        ['2024-06', 'Spotify', 'Kept Song', 'USRC12400011', 'US', '5', '4.40'],
        ['2024-06', 'Deezer', 'Kept Song', 'USRC12400011', 'FR', '1', '0.60'],
      ]),
    );
    t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
    const earnings = async () => {
      const res = await owner.client.mutate('cube.query', {
        organizationId: org,
        query: {
          measures: [
            'analytics_full_view.royalty_earnings',
            'analytics_full_view.statement_row_count',
          ],
          filters: [
            { member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: [third] },
          ],
        },
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      return (res.data as { data: unknown[] }).data[0];
    };
    t.same(await earnings(), {
      'analytics_full_view.royalty_earnings': '5',
      'analytics_full_view.statement_row_count': '2',
    });
    // the original object is gone: the reprocess fails with a reason
    const {
      rows: [row],
    } = await srv.deps.pool.query<{ object_key: string }>(
      'SELECT object_key FROM statements WHERE id = $1',
      [up.statementId],
    );
    await srv.deps.store.delete(row!.object_key);
    await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId },
    });
    let failed: any;
    for (let i = 0; i < 300; i++) {
      failed = await waitForStatement(owner.client, org, up.statementId);
      if (failed.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.match(failed, {
      status: 'failed',
      failureReason: { errorCode: 'UPLOAD_OBJECT_MISSING' },
      keptRows: 2,
      netEarnings: '5.000000000000',
    });
    t.same(
      await earnings(),
      {
        'analytics_full_view.royalty_earnings': '5',
        'analytics_full_view.statement_row_count': '2',
      },
      'the previous rows are still read',
    );
    const stats = await owner.client.query('dataFreshness.ingestionStats', {
      organizationId: org,
      rightsholderIds: [third],
    });
    t.match(stats.data?.rows, { kept: 2 });
    // set aside, its rows go
    await srv.deps.pool.query(`UPDATE statements SET status = 'skipped' WHERE id = $1`, [
      up.statementId,
    ]);
    t.same(await earnings(), {
      'analytics_full_view.royalty_earnings': null,
      'analytics_full_view.statement_row_count': '0',
    });
  },
);
