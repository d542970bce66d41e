// The shared library's mappings on statements with the real published headers
// (shared/reference/statement-formats.md), through the real upload, pipeline and API: each is
// processed with its library mapping (no needs_mapping) and reads the right columns and period.
import t from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { libraryMapping, ok } from './helpers.ts';

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv);
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Library Artist');

function file(header: string[], rows: Record<string, string>[], delimiter = ','): Buffer {
  return Buffer.from([header, ...rows.map((r) => header.map((h) => r[h] ?? ''))].map((cells) => cells.join(delimiter)).join('\n') + '\n');
}

async function ingest(name: string, bytes: Buffer): Promise<any> {
  const { statementId } = await putFile(owner.client, org, artist, name, bytes);
  return { ...(await waitForStatement(owner.client, org, statementId)), statementId };
}

t.test("Apple: the report's fiscal month is the one its file name names, not its End Date's", async (t) => {
  const apple = await libraryMapping(t, owner, 'apple');
  const header = apple.headers as string[];
  // January 2025 is a five-week fiscal month: 12/29/2024 to 02/01/2025
  const row = (qty: string, share: string, ext: string, sr: string) => ({
    'Start Date': '12/29/2024',
    'End Date': '02/01/2025',
    'ISRC/ISBN': 'USRC12400001',
    Quantity: qty,
    'Partner Share': share,
    'Extended Partner Share': ext,
    'Partner Share Currency': 'USD',
    'Sales or Return': sr,
    'Country Of Sale': 'US',
  });
  const bytes = file(header, [row('3', '0.7', '2.1', 'S'), row('-1', '0.7', '-0.7', 'R'), row('12', '6.93', '83.16', 'S')], '\t');
  const s = await ingest('80012345_0125_US.txt', bytes);
  t.equal(s.status, 'processed');
  t.equal(s.mappingId, apple.id, 'the library mapping, no needs_mapping');
  t.same([s.stmtYear, s.stmtCadence, s.stmtPeriod], [2025, 'M', 1], 'January 2025');
  t.equal(s.netEarnings, '84.560000000000');
  t.equal(s.units, '14.000000000000');
  t.same(
    s.currencyTotals.map((c: any) => [c.currency, c.net]),
    [['USD', '84.560000000000']],
  );
  // the sales period keeps the exact fiscal dates
  const sample = ok(t, await owner.client.mutate('mapping.processSample', { organizationId: org, statementId: s.statementId, mappingId: apple.id, endRow: 1 }));
  t.match(sample.rows[0], { stmt_year: 2025, stmt_period: 1, sales_period_start: '2024-12-29', sales_period_end: '2025-02-01' });

  // April 2025 (03/30-05/03) likewise; a renamed file falls back on its End Date
  const april = (r: Record<string, string>) => ({ ...r, 'Start Date': '03/30/2025', 'End Date': '05/03/2025' });
  const aprilBytes = file(header, [april(row('1', '0.7', '0.7', 'S'))], '\t');
  const named = await ingest('80012345_0425_US.txt', aprilBytes);
  t.same([named.mappingId, named.stmtYear, named.stmtPeriod], [apple.id, 2025, 4]);
  const renamed = await ingest('apple report.txt', aprilBytes);
  t.same([renamed.mappingId, renamed.stmtYear, renamed.stmtPeriod], [apple.id, 2025, 5], 'no month in the name: the End Date month');
});
