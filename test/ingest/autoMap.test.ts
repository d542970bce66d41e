// Statements of layouts no mapping knows (fixtures/statements/unseen), each uploaded through the
// API with no mapping present: processed with the mapping their run created and proved (flag
// auto_mapped, exact sums), or waiting in needs_mapping with the suggestion and the right reason,
// or refused when they are no statement. The created mapping is the organization's own: editable,
// revisioned, used by the next file of its layout (whose own preamble gives its period), and no
// other organization's.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createRightsholder, putFile, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { repoRoot } from '../setup/paths.ts';

interface Expected {
  file: string;
  source: string;
  status: 'processed' | 'needs_mapping' | 'failed';
  dataRecords?: number;
  netEarningsSum?: string;
  unitsSum?: string | null;
  currency?: string;
  period?: string;
  statedTotals?: number;
  reasons?: { code: string; field?: string; column?: string }[];
  errorCode?: string;
}

/** a statement is normalized twice the first time its layout is seen (the proof, then the run): generous on a loaded machine */
const WAIT_MS = 180_000;
const dir = path.join(repoRoot, 'fixtures', 'statements', 'unseen');
const expectations = readdirSync(dir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Expected);

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Unseen Layouts Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Unseen Artist');

const periodOf = (s: { stmtYear: number; stmtPeriod: number; stmtCadence: string }) =>
  s.stmtCadence === 'M'
    ? `${s.stmtYear}-${String(s.stmtPeriod).padStart(2, '0')}`
    : s.stmtCadence === 'Y'
      ? String(s.stmtYear)
      : `${s.stmtYear}${s.stmtCadence}${s.stmtPeriod}`;

const organizationMappings = async (client = owner.client, organizationId = org) => {
  const res = await client.query('mapping.list', { organizationId, source: 'organization' });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data as { id: string; name: string; revision: number }[];
};
const initially = await organizationMappings();
t.ok(expectations.length >= 10, `at least ten unseen layouts (${expectations.length})`);
t.same(initially, [], 'the organization starts with no mapping of its own');

const created = new Map<string, string>();
for (const expected of expectations) {
  t.test(`${expected.file} (${expected.source}): ${expected.status}`, async (t) => {
    const { statementId } = await uploadFixture(
      owner.client,
      org,
      artist,
      path.join(dir, expected.file),
    );
    const s = await waitForStatement(owner.client, org, statementId, WAIT_MS);
    t.equal(
      s.status,
      expected.status,
      `status ${s.failureReason ? JSON.stringify(s.failureReason) : ''}`,
    );
    if (expected.status === 'failed') {
      t.equal(s.failureReason?.errorCode, expected.errorCode);
      return;
    }
    if (expected.status === 'needs_mapping') {
      const automatic = s.suggestedMapping?.automatic;
      t.ok(
        s.suggestedMapping?.fields?.royaltyEarnings ||
          expected.reasons?.some((r) => r.field === 'royaltyEarnings'),
        'waits with the suggestion',
      );
      t.equal(automatic?.applied, false, 'not applied');
      for (const want of expected.reasons ?? []) {
        t.ok(
          (automatic?.reasons ?? []).some(
            (r: any) =>
              r.code === want.code &&
              (!want.field || r.field === want.field) &&
              (!want.column || r.column === want.column),
          ),
          `reason ${JSON.stringify(want)} in ${JSON.stringify(automatic?.reasons)}`,
        );
      }
      t.equal(s.mappingId, null, 'no mapping applied');
      return;
    }
    const flag = s.flags.find((f: any) => f.kind === 'auto_mapped');
    t.ok(flag, 'flagged auto_mapped');
    t.equal(flag?.severity, 'info');
    t.equal(flag?.details.mappingId, s.mappingId, 'the flag names the mapping the statement uses');
    t.equal(s.mappingMatch.by, 'automatic');
    t.equal(s.mappingRevision, 1);
    // (no exchange rates are loaded here: missing_fx_rate is expected)
    const errors = s.flags.filter(
      (f: any) => f.severity === 'error' && f.kind !== 'missing_fx_rate',
    );
    t.same(errors, [], 'no error flag');
    t.equal(s.keptRows, expected.dataRecords, 'every data row kept');
    t.equal(
      canonicalDecimal(s.netEarnings),
      canonicalDecimal(expected.netEarningsSum!),
      'net earnings to the last decimal',
    );
    if (expected.unitsSum)
      t.equal(canonicalDecimal(s.units), canonicalDecimal(expected.unitsSum), 'units');
    t.equal(s.currency, expected.currency, 'currency');
    t.equal(periodOf(s), expected.period, 'statement period');
    t.equal(flag?.details.proof.totals.length, expected.statedTotals, 'the stated totals checked');
    t.ok(
      flag?.details.proof.totals.every((x: any) => x.agrees),
      'each stated total agrees',
    );
    created.set(expected.file, s.mappingId);
  });
}

t.test('the created mappings are the organization own, editable and revisioned', async (t) => {
  const mine = await organizationMappings();
  t.same(
    mine.map((m) => m.id).sort(),
    [...created.values()].sort(),
    'one per processed layout, none for the others',
  );
  const gema = created.get('gema-abrechnung.csv')!;
  const got = await owner.client.query('mapping.getById', { organizationId: org, id: gema });
  t.equal(got.ok, true);
  t.equal(got.data.source, 'organization');
  t.same(got.data.fields.royaltyEarnings, { column: 'Betrag' });
  t.same(got.data.fields.stmtYear, { variable: 'filePeriod' }, 'the period comes from each file');
  const edited = await owner.client.mutate('mapping.updateById', {
    organizationId: org,
    id: gema,
    name: 'GEMA (checked)',
  });
  t.equal(edited.ok, true, JSON.stringify(edited.error));
  t.equal(edited.data.revision, 2, 'an edit is a new revision');
});

t.test('the next file of a layout uses its mapping, with its own preamble facts', async (t) => {
  const text = readFileSync(path.join(dir, 'gema-abrechnung.csv'), 'utf8')
    .replace('01.01.2024 - 30.06.2024', '01.07.2024 - 31.12.2024')
    .replace('Gesamtbetrag;1.297,28', 'Gesamtbetrag;1.000,00');
  const { statementId } = await putFile(
    owner.client,
    org,
    artist,
    'gema-2024-2.csv',
    Buffer.from(text),
  );
  const s = await waitForStatement(owner.client, org, statementId, WAIT_MS);
  t.equal(s.status, 'processed');
  t.equal(s.mappingId, created.get('gema-abrechnung.csv'));
  t.equal(s.mappingMatch.by, 'header_hash');
  t.equal(periodOf(s), '2024H2', 'the period of its own preamble');
  t.equal(canonicalDecimal(s.netEarnings), '1297.28');
  t.notOk(
    s.flags.some((f: any) => f.kind === 'auto_mapped'),
    'no new automatic mapping',
  );
});

t.test('another organization gets a mapping of its own, never this one', async (t) => {
  const other = await newOrganization(srv, 'Other Label');
  const theirArtist = await createRightsholder(other.client, other.organizationId, 'Their Artist');
  const { statementId } = await uploadFixture(
    other.client,
    other.organizationId,
    theirArtist,
    path.join(dir, 'gema-abrechnung.csv'),
  );
  const s = await waitForStatement(other.client, other.organizationId, statementId, WAIT_MS);
  t.equal(s.status, 'processed');
  t.not(s.mappingId, created.get('gema-abrechnung.csv'));
  t.equal(s.mappingMatch.by, 'automatic');
  t.same(
    (await organizationMappings(other.client, other.organizationId)).map((m) => m.id),
    [s.mappingId],
  );
});

t.test('hostile preamble text is data, never SQL', async (t) => {
  const text = [
    "Payee,Robert'); DROP TABLE mappings;--",
    'Statement Period,2024-05',
    'Currency,EUR',
    '',
    'Track Title,ISRC,Streams,Net Revenue',
    "Don't Stop,GBCEL2400101,10,1.25",
    'Quote "Me",GBCEL2400102,5,0.75',
  ].join('\n');
  const { statementId } = await putFile(
    owner.client,
    org,
    artist,
    "x';--.csv",
    Buffer.from(`${text}\n`),
  );
  const s = await waitForStatement(owner.client, org, statementId, WAIT_MS);
  t.equal(s.status, 'processed');
  t.equal(canonicalDecimal(s.netEarnings), '2');
  t.equal(periodOf(s), '2024-05');
  const flag = s.flags.find((f: any) => f.kind === 'auto_mapped');
  t.equal(flag?.details.facts.payee.value, "Robert'); DROP TABLE mappings;--");
  const { rows } = await srv.deps.pool.query(
    'SELECT count(*)::int AS n FROM mappings WHERE organization_id = $1',
    [org],
  );
  t.ok(rows[0].n > 0, 'the mappings table is there');
});
