// The shared library's mappings on statements with the real published headers (each mapping's
// `headers` in fixtures/mappings/; the formats are listed in docs/ingestion.md, "The shared mapping
// library"), through the real upload, pipeline and API: each is processed with its library
// mapping (no needs_mapping) and reads the right columns and period.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { repoRoot } from '../../setup/paths.ts';
import { libraryMapping } from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv);
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Library Artist');

function file(header: string[], rows: Record<string, string>[], delimiter = ','): Buffer {
  return Buffer.from(
    [header, ...rows.map((r) => header.map((h) => r[h] ?? ''))]
      .map((cells) => cells.join(delimiter))
      .join('\n') + '\n',
  );
}

async function ingest(name: string, bytes: Buffer): Promise<any> {
  const { statementId } = await putFile(owner.client, org, artist, name, bytes);
  return { ...(await waitForStatement(owner.client, org, statementId)), statementId };
}

t.test(
  "Apple: the report's fiscal month is the one its file name names, not its End Date's",
  async (t) => {
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
    const bytes = file(
      header,
      [row('3', '0.7', '2.1', 'S'), row('-1', '0.7', '-0.7', 'R'), row('12', '6.93', '83.16', 'S')],
      '\t',
    );
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
    const sample = ok(
      t,
      await owner.client.mutate('mapping.processSample', {
        organizationId: org,
        statementId: s.statementId,
        mappingId: apple.id,
        endRow: 1,
      }),
    );
    t.match(sample.rows[0], {
      stmt_year: 2025,
      stmt_period: 1,
      sales_period_start: '2024-12-29',
      sales_period_end: '2025-02-01',
    });

    // April 2025 (03/30-05/03) likewise; a renamed file falls back on its End Date
    const april = (r: Record<string, string>) => ({
      ...r,
      'Start Date': '03/30/2025',
      'End Date': '05/03/2025',
    });
    const aprilBytes = file(header, [april(row('1', '0.7', '0.7', 'S'))], '\t');
    const named = await ingest('80012345_0425_US.txt', aprilBytes);
    t.same([named.mappingId, named.stmtYear, named.stmtPeriod], [apple.id, 2025, 4]);
    const renamed = await ingest('apple report.txt', aprilBytes);
    t.same(
      [renamed.mappingId, renamed.stmtYear, renamed.stmtPeriod],
      [apple.id, 2025, 5],
      'no month in the name: the End Date month',
    );
  },
);

t.test(
  "Cargo Records: royalty_extended.csv with the wiki's run columns is the library's, not needs_mapping",
  async (t) => {
    const cargo = await libraryMapping(t, owner, 'cargo-digital-runs');
    t.same(cargo.headers.slice(-5), [
      'Report Run ID',
      'Report ID',
      'Sale ID',
      'Statement Run ID',
      'Statement Run Name',
    ]);
    t.equal(cargo.distributorName, 'Cargo Records');
    const fixture = path.join(repoRoot, 'fixtures', 'statements', 'cargo-royalty_extended.csv');
    const expected = JSON.parse(readFileSync(`${fixture}.expected.json`, 'utf8'));
    const s = await ingest('Harbour_Records-royalty_extended.csv', readFileSync(fixture));
    t.equal(s.status, 'processed');
    t.equal(s.mappingId, cargo.id, 'the library mapping, no needs_mapping');
    t.same([s.stmtYear, s.stmtCadence, s.stmtPeriod], [2023, 'Q', 4]);
    t.equal(s.keptRows, 20);
    t.same(
      s.currencyTotals.map((c: any) => [c.currency, c.net, c.units]),
      [['GBP', '223.014277475000', '71287.000000000000']],
    );
    t.equal(expected.netEarningsSum, '223.014277475', 'the sum the fixture states');
    const sample = ok(
      t,
      await owner.client.mutate('mapping.processSample', {
        organizationId: org,
        statementId: s.statementId,
        mappingId: cargo.id,
        endRow: 1,
      }),
    );
    t.match(sample.rows[0], {
      currency: 'GBP',
      royalty_earnings: '13.454550955000',
      units: '2966.000000000000',
      isrc: 'GBUM72272195',
      country: 'JP',
      source: 'Apple Music',
    });
  },
);
