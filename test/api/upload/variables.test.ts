// A mapping's `variable` fields read values given with the upload: upload.uploadFile's
// `variables`, replaced by upload.uploadAction's (complete, reprocess), kept with the statement and
// read by the pipeline, the variants and mapping.processSample (unless it is given its own).
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Variables Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Variables Artist');

// a layout that names no currency anywhere: the uploader says which it is
const header = ['Period', 'Track', 'Net'];
await insertMapping(srv.deps.pool, org, 'No currency', header, {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { variable: 'currency' },
  royaltyEarnings: { column: 'Net' },
  rawTitle: { column: 'Track' },
  // never given: an own-property lookup, not Object's constructor
  rawArtist: { variable: 'constructor' },
});
const bytes = Buffer.from(`${header.join(',')}\n2024-05,Ember,1.50\n2024-05,Slow River,2.25\n`);

const statement = async (id: string) => waitForStatement(owner.client, org, id);

t.test(
  'variables given with uploadFile are read by the pipeline and kept with the statement',
  async (t) => {
    const up = await putFile(owner.client, org, artist, 'may.csv', bytes, {
      variables: { currency: 'EUR' },
    });
    const s = await statement(up.statementId);
    t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
    t.equal(s.currency, 'EUR');
    t.equal(s.netEarnings, '3.750000000000');
    t.same(s.variables, { currency: 'EUR' });

    // processSample reads the statement's own, unless given others
    const own = await owner.client.mutate('mapping.processSample', {
      organizationId: org,
      statementId: up.statementId,
      mappingId: s.mappingId,
    });
    t.same(own.ok && own.data.rows.map((r: any) => [r.currency, r.raw_artist]), [
      ['EUR', null],
      ['EUR', null],
    ]);
    const given = await owner.client.mutate('mapping.processSample', {
      organizationId: org,
      statementId: up.statementId,
      mappingId: s.mappingId,
      variables: { currency: 'gbp' },
    });
    t.same(given.ok && given.data.rows.map((r: any) => r.currency), ['GBP', 'GBP']);
  },
);

t.test(
  'without them the currency is missing; reprocess with variables replaces them',
  async (t) => {
    const up = await putFile(owner.client, org, artist, 'may-b.csv', bytes);
    const before = await statement(up.statementId);
    t.equal(before.status, 'processed');
    t.equal(before.currency, null);
    t.same(before.variables, {});
    t.match(
      before.flags.find((f: { kind: string }) => f.kind === 'missing_currency'),
      {
        severity: 'error',
        message: '2 rows have no currency: their USD amounts stay empty.',
        details: { rows: 2 },
      },
    );

    const again = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId, variables: { currency: ' USD ' } },
    });
    t.equal(again.ok, true, JSON.stringify(again.ok ? null : again.error));
    const after = await statement(up.statementId);
    t.equal(after.status, 'processed');
    t.equal(after.currency, 'USD');
    t.same(after.variables, { currency: 'USD' }, 'trimmed');
    t.notOk(
      after.flags.some((f: { kind: string }) => f.kind === 'missing_currency'),
      'the flag goes with the reprocess',
    );
  },
);

t.test('bad variables are VALIDATION_FAILED and change nothing', async (t) => {
  const up = await putFile(owner.client, org, artist, 'may-c.csv', bytes, {
    variables: { currency: 'CHF' },
  });
  await statement(up.statementId);
  const bad: [string, Record<string, unknown>][] = [
    [
      'a name that is no variable name',
      { type: 'reprocess', statementId: up.statementId, variables: { '1x': 'EUR' } },
    ],
    [
      'a non-string value',
      { type: 'reprocess', statementId: up.statementId, variables: { currency: 5 } },
    ],
    [
      'more than 50',
      {
        type: 'reprocess',
        statementId: up.statementId,
        variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])),
      },
    ],
    [
      'a value over 300 characters',
      { type: 'reprocess', statementId: up.statementId, variables: { currency: 'x'.repeat(301) } },
    ],
    [
      'with an action that reads no file',
      { type: 'skip', statementId: up.statementId, variables: { currency: 'EUR' } },
    ],
  ];
  for (const [why, action] of bad) {
    const res = await owner.client.mutateUnchecked('upload.uploadAction', {
      organizationId: org,
      action,
    });
    t.same(
      res.ok ? null : [res.error.data.code, res.error.data.errorCode],
      ['BAD_REQUEST', 'VALIDATION_FAILED'],
      why,
    );
  }
  const upload = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'x.csv',
    variables: { 'drop table': 'x' },
  });
  t.same(upload.ok ? null : upload.error.data.errorCode, 'VALIDATION_FAILED');
  const s = await statement(up.statementId);
  t.same([s.status, s.currency, s.variables], ['processed', 'CHF', { currency: 'CHF' }]);
});
