// The US dollars the missing-lookup reports show for a raw value of an ingested statement with
// several currencies: each currency's amount at that currency's rate, as analytics sums them
// (one rate for every currency made EUR and GBP rows count at the same rate).
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { CURRENCY_REPORT_HEADER, currencyReportFields } from '../../helpers/sampleMapping.ts';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Mixed Currency Label');
const org = owner.organizationId;
const op = (await outsider(srv, org, 'c2_superadmin')).client;
const artist = await createRightsholder(owner.client, org, 'Mixed Currency Artist');
const header = CURRENCY_REPORT_HEADER;
await insertMapping(srv.deps.pool, org, 'Mixed currency layout', header, currencyReportFields);

t.test(
  'a raw value of a statement in EUR, GBP and RUB: each amount at its own rate, none for RUB',
  async (t) => {
    const csv = [
      header.join(','),
      '2024-08,Zyxwv Radio,Qwobble Play,Song A,1,100,EUR',
      '2024-08,Zyxwv Radio,Qwobble Play,Song B,1,100,GBP',
      '2024-08,Zyxwv Radio,Qwobble Play,Song C,1,500,RUB',
    ].join('\n');
    const up = await putFile(owner.client, org, artist, 'mixed.csv', Buffer.from(`${csv}\n`));
    t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
    // the shipped rates of 2024-08-30: EUR 1.1087, GBP 1.3179980979553019 US dollars; RUB has none
    // 100 × 1.1087 + 100 × 1.3179980979553019 = 242.66980979553019
    const sources = data(
      await op.query('lookupSource.missingSources', { pagination: { page: 1, limit: 100 } }),
    );
    t.same(
      sources.data.filter((r: any) => r.original === 'Zyxwv Radio'),
      [
        {
          original: 'Zyxwv Radio',
          normalized: 'zyxwv radio',
          variants: ['Zyxwv Radio'],
          rowCount: 3,
          usdAmount: '242.6698097955',
          statementCount: 1,
          organizationCount: 1,
        },
      ],
    );
    const salesTypes = data(
      await op.query('lookupSalesType.missingSalesTypes', { pagination: { page: 1, limit: 100 } }),
    );
    t.same(
      salesTypes.data
        .filter((r: any) => r.original === 'Qwobble Play')
        .map((r: any) => [r.rowCount, r.usdAmount]),
      [[3, '242.6698097955']],
    );
    // the same total analytics answers for the raw source (to the cent: analytics holds rates at 14 decimals)
    const cube = data(
      await owner.client.mutate('cube.query', {
        organizationId: org,
        query: {
          measures: ['analytics_full_view.royalty_earnings_usd'],
          dimensions: ['analytics_full_view.source_raw'],
          filters: [
            { member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: [artist] },
          ],
        },
      }),
    );
    t.same(
      cube.data.map((r: any) => r['analytics_full_view.source_raw']),
      ['Zyxwv Radio'],
    );
    t.equal(Number(cube.data[0]['analytics_full_view.royalty_earnings_usd']).toFixed(2), '242.67');
  },
);
