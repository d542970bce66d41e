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
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { taskList } from '../../src/jobs/tasks.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import type { NormalizeInput } from '../../src/ingest/normalizeTypes.ts';
import type { TaskOptions } from '../../src/workers/threadPool.ts';

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
  /** the columns a computed amount multiplies */
  computedFrom?: string[];
  reasons?: { code: string; field?: string; column?: string }[];
  errorCode?: string;
}

/** every upload of a wave is in flight at once, each normalized for its proof and its run: generous on a loaded machine */
const WAIT_MS = 180_000;
const dir = path.join(repoRoot, 'fixtures', 'statements', 'unseen');
const expectations = readdirSync(dir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Expected);

// each normalizer run counted per statement: the first file of a layout is normalized once (the
// proof's rows are the run's), never once to prove and again to store
const normalized = new Map<string, number>();
const srv = await startTestHandler(t, {
  taskList: (deps) => ({
    ...taskList(deps),
    [STATEMENT_INGEST_TASK]: statementIngestTask({
      ...deps,
      threads: Object.assign(Object.create(deps.threads), {
        normalize: (input: NormalizeInput, options?: TaskOptions) => {
          normalized.set(input.statementId, (normalized.get(input.statementId) ?? 0) + 1);
          return deps.threads.normalize(input, options);
        },
      }),
    }),
  }),
});
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
const other = await newOrganization(srv, 'Other Label');
const theirArtist = await createRightsholder(other.client, other.organizationId, 'Their Artist');
const initially = await organizationMappings();
t.ok(expectations.length >= 10, `at least ten unseen layouts (${expectations.length})`);
t.same(initially, [], 'the organization starts with no mapping of its own');

// every upload of the first wave at once (the fixtures, another organization's GEMA file, a
// hostile preamble): their jobs run side by side, and each subtest asserts its settled record
const hostileText = [
  "Payee,Robert'); DROP TABLE mappings;--",
  'Statement Period,2024-05',
  'Currency,EUR',
  '',
  'Track Title,ISRC,Streams,Net Revenue',
  "Don't Stop,GBCEL2400101,10,1.25",
  'Quote "Me",GBCEL2400102,5,0.75',
].join('\n');
// (each wave runs in a subtest of its own: the subtests after it read what it settled)
let settled: any[] = [];
let theirs: any;
let hostile: any;
t.test('the first wave: every upload at once', async (t) => {
  [settled, theirs, hostile] = await Promise.all([
    Promise.all(
      expectations.map(async (expected) => {
        const up = await uploadFixture(owner.client, org, artist, path.join(dir, expected.file));
        return waitForStatement(owner.client, org, up.statementId, WAIT_MS);
      }),
    ),
    uploadFixture(
      other.client,
      other.organizationId,
      theirArtist,
      path.join(dir, 'gema-abrechnung.csv'),
    ).then((up) => waitForStatement(other.client, other.organizationId, up.statementId, WAIT_MS)),
    putFile(owner.client, org, artist, "x';--.csv", Buffer.from(`${hostileText}\n`)).then((up) =>
      waitForStatement(owner.client, org, up.statementId, WAIT_MS),
    ),
  ]);
  t.equal(settled.length, expectations.length, 'every fixture settled');
});

const created = new Map<string, string>();
expectations.forEach((expected, i) => {
  t.test(`${expected.file} (${expected.source}): ${expected.status}`, async (t) => {
    const s = settled[i]!;
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
    t.equal(normalized.get(s.id), 1, 'normalized once: the proof is the run');
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
    if (expected.computedFrom) {
      t.match(
        flag?.details.basis.royaltyEarnings.why,
        `computed as ${expected.computedFrom.join(' × ')}`,
        'the basis names the formula',
      );
    }
    created.set(expected.file, s.mappingId);
  });
});

// the second wave, on the mappings the first created: the next GEMA file, an Apple file with a blank price
const gemaNext = readFileSync(path.join(dir, 'gema-abrechnung.csv'), 'utf8')
  .replace('01.01.2024 - 30.06.2024', '01.07.2024 - 31.12.2024')
  .replace('Gesamtbetrag;1.297,28', 'Gesamtbetrag;1.000,00');
const APPLE = 'S_M_80012345_201006.txt';
// row 5 (7 × 0.64) loses its price: that row has no amount, never 0 × 7
const appleBlank = readFileSync(path.join(dir, APPLE), 'utf8').replace('\t7\t0.64\t', '\t7\t\t');
let nextGema: any;
let blankPrice: any;
t.test('the second wave: files of the layouts now mapped', async (t) => {
  [nextGema, blankPrice] = await Promise.all(
    [
      ['gema-2024-2.csv', gemaNext],
      ['S_M_80012345_201007.txt', appleBlank.replaceAll('06/30/2010', '07/31/2010')],
    ].map(([name, text]) =>
      putFile(owner.client, org, artist, name!, Buffer.from(text!)).then((up) =>
        waitForStatement(owner.client, org, up.statementId, WAIT_MS),
      ),
    ),
  );
  t.ok(nextGema && blankPrice, 'both settled');
});

t.test('the created mappings are the organization own, editable and revisioned', async (t) => {
  const mine = await organizationMappings();
  t.same(
    mine.map((m) => m.id).sort(),
    [...created.values(), hostile.mappingId].sort(),
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
  const apple = await owner.client.query('mapping.getById', {
    organizationId: org,
    id: created.get(APPLE)!,
  });
  t.same(
    apple.data.fields.royaltyEarnings,
    { multiply: ['Units', 'Royalty Price'] },
    'the computed amount is in the mapping contract',
  );
  t.notOk(apple.data.fields.royaltyRate, 'the price is not also read as a rate');
});

t.test(
  'a reprocess keeps the flag while its automatic mapping is unedited, not after an edit',
  async (t) => {
    const statementOf = (file: string) => settled[expectations.findIndex((e) => e.file === file)]!;
    const hfa = statementOf('harry-fox-mechanicals.csv');
    const gema = statementOf('gema-abrechnung.csv'); // its mapping was edited above (revision 2)
    const [hfaAgain, gemaAgain] = await Promise.all(
      [hfa, gema].map(async (s) => {
        const res = await owner.client.mutate('upload.uploadAction', {
          organizationId: org,
          action: { type: 'reprocess', statementId: s.id },
        });
        t.equal(res.ok, true, JSON.stringify(res.error));
        return waitForStatement(owner.client, org, s.id, WAIT_MS);
      }),
    );
    t.equal(hfaAgain.status, 'processed');
    t.equal(hfaAgain.mappingId, hfa.mappingId);
    t.equal(hfaAgain.mappingMatch.by, 'automatic', 'still read automatically');
    t.match(
      hfaAgain.flags.find((f: any) => f.kind === 'auto_mapped'),
      { severity: 'info', details: { mappingId: hfa.mappingId, revision: 1 } },
      'the flag still names the mapping',
    );
    t.same(
      hfaAgain.mappingMatch.automatic,
      hfa.mappingMatch.automatic,
      'with the basis and proof of the run that made it',
    );
    t.equal(canonicalDecimal(hfaAgain.netEarnings), canonicalDecimal(hfa.netEarnings));
    t.equal(normalized.get(hfa.id), 2, 'one normalizer run per processing');
    t.equal(gemaAgain.status, 'processed');
    t.equal(gemaAgain.mappingMatch.by, 'header_hash', 'an edited mapping is the organization’s');
    t.equal(gemaAgain.mappingRevision, 2);
    t.notOk(
      gemaAgain.flags.some((f: any) => f.kind === 'auto_mapped'),
      'no auto_mapped flag after an edit',
    );
  },
);

t.test('a formula that is no product of two columns of an amount is refused', async (t) => {
  const headers = ['Units', 'Royalty Price', 'ISRC', 'Currency', 'Month'];
  const base = {
    currency: { column: 'Currency' },
    stmtYear: { column: 'Month' },
    stmtPeriod: { column: 'Month' },
    stmtCadence: { constant: 'M' },
  };
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'the same column twice',
      { ...base, royaltyEarnings: { multiply: ['Units', 'units'] } },
      'fields.royaltyEarnings.multiply',
    ],
    [
      'an identifier computed',
      {
        ...base,
        royaltyEarnings: { column: 'Royalty Price' },
        isrc: { multiply: ['Units', 'ISRC'] },
      },
      'fields.isrc.multiply',
    ],
  ];
  for (const [label, fields, path] of cases) {
    const res = await owner.client.mutate('mapping.create', {
      organizationId: org,
      name: `bad formula: ${label}`,
      headers,
      headerHash: computeHeaderHash(headers),
      fields,
    });
    t.equal(res.error?.data?.errorCode, 'MAPPING_FORMULA_INVALID', label);
    t.equal((res.error as any)?.data?.details?.fields?.[0]?.path, path, `${label}: its path`);
  }
});

t.test('the next file of a layout uses its mapping, with its own preamble facts', async (t) => {
  const s = nextGema!;
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

t.test('a blank price leaves its row without an amount, never 0', async (t) => {
  const s = blankPrice!;
  t.equal(s.status, 'processed');
  t.equal(s.mappingId, created.get(APPLE), 'the stored computed mapping');
  t.equal(s.keptRows, 8);
  t.equal(canonicalDecimal(s.netEarnings), '56.91', '61.39 less the row of 7 × 0.64');
  t.equal(canonicalDecimal(s.units), '58', 'its units still count');
  t.match(
    s.flags.find((f: any) => f.kind === 'missing_amounts'),
    { severity: 'info', details: { rows: 1 } },
  );
});

t.test('another organization gets a mapping of its own, never this one', async (t) => {
  t.equal(theirs.status, 'processed');
  t.not(theirs.mappingId, created.get('gema-abrechnung.csv'));
  t.equal(theirs.mappingMatch.by, 'automatic');
  t.same(
    (await organizationMappings(other.client, other.organizationId)).map((m) => m.id),
    [theirs.mappingId],
  );
});

t.test('hostile preamble text is data, never SQL', async (t) => {
  const s = hostile;
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
