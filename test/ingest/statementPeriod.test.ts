// A statement's period and the overlapping_period flag, through the HTTP API with the library's
// DistroKid mapping (statement month from Reporting Date): a report whose rows span the months of
// one quarter is that quarter; rows of two calendar years keep their most common month; a
// statement overlaps another of its distributor and rightsholder when their periods share a month.
import t from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const HEADER = [
  'Reporting Date',
  'Sale Month',
  'Store',
  'Artist',
  'Title',
  'ISRC',
  'UPC',
  'Quantity',
  'Team Percentage',
  'Song/Album',
  'Country of Sale',
  'Songwriter Royalties Withheld',
  'Earnings (USD)',
];

/** A DistroKid report with one row per reporting date. */
const report = (dates: string[]) =>
  Buffer.from(
    `${[HEADER, ...dates.map((d, i) => [d, d.slice(0, 7), 'Spotify', 'Orla Finn', `Song ${i}`, '', '', '10', '100', 'Song', 'US', '0', '1.25'])].map((r) => r.join('\t')).join('\n')}\n`,
  );

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Statement Period Org');
const org = owner.organizationId;

async function ingest(rightsholderId: string, name: string, dates: string[]) {
  const { statementId } = await putFile(owner.client, org, rightsholderId, name, report(dates));
  const s = await waitForStatement(owner.client, org, statementId);
  t.equal(s.status, 'processed', `${name} processed ${JSON.stringify(s.failureReason)}`);
  const overlap = s.flags.find((f: { kind: string }) => f.kind === 'overlapping_period');
  return {
    id: statementId as string,
    period: [s.stmtYear, s.stmtPeriod, s.stmtCadence],
    overlaps: (overlap?.details?.statementIds ?? null) as string[] | null,
    kinds: s.flags.map((f: { kind: string }) => f.kind).sort() as string[],
  };
}

t.test('a quarter by month is that quarter, and overlaps each of its months', async (t) => {
  const rh = await createRightsholder(owner.client, org, 'Quarter Artist');
  const quarter = await ingest(rh, 'q1.tsv', [
    '2024-01-05',
    '2024-02-05',
    '2024-02-06',
    '2024-03-05',
  ]);
  t.same(quarter.period, [2024, 1, 'Q']);
  t.same(quarter.kinds, ['several_statement_periods']);
  t.equal(quarter.overlaps, null);

  const march = await ingest(rh, 'march.tsv', ['2024-03-10', '2024-03-11']);
  t.same(march.period, [2024, 3, 'M']);
  t.same(march.overlaps, [quarter.id], 'March lies in the first quarter');

  const april = await ingest(rh, 'april.tsv', ['2024-04-10']);
  t.same(april.period, [2024, 4, 'M']);
  t.equal(april.overlaps, null, 'April does not');

  // rows of December and January: no quarter or year holds both, so the most common month
  const turn = await ingest(rh, 'turn.tsv', ['2023-12-20', '2024-01-03', '2024-01-04']);
  t.same(turn.period, [2024, 1, 'M']);
  t.same(turn.overlaps, [quarter.id]);

  const half = await ingest(rh, 'h1.tsv', ['2024-02-01', '2024-05-01']);
  t.same(half.period, [2024, 1, 'H'], 'February and May: the first half');
  t.same(half.overlaps, [quarter.id, march.id, april.id, turn.id]);

  // another rightsholder's statements never overlap these
  const other = await createRightsholder(owner.client, org, 'Other Artist');
  t.equal((await ingest(other, 'march-other.tsv', ['2024-03-10'])).overlaps, null);
});
