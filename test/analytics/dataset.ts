// A small synthetic dataset every cube test can reason about row by row. Titles name the rows.
//
//   S1  RH1, distributor D1 (own), 2024 M03, EUR at 1.1      Alpha, Beta 100%, gamma_x, Delta\Path
//   S2  RH1, distributor D2 (library), 2023 Q4, USD at 1     Echo, Foxtrot
//   S3  RH2, distributor D1, 2024 M01, GBP without a rate     Golf
import type { TestServer } from '../helpers/server.ts';
import { seedDistributor, seedRightsholder, seedStatement } from './helpers.ts';

export interface Dataset {
  rh1: string;
  rh2: string;
  d1: string;
  d2: string;
  s1: string;
  s2: string;
  s3: string;
}

export async function seedDataset(
  srv: Pick<TestServer, 'deps'>,
  organizationId: string,
  prefix = '',
): Promise<Dataset> {
  const rh1 = await seedRightsholder(srv, organizationId, `${prefix}Artist One`);
  const rh2 = await seedRightsholder(srv, organizationId, `${prefix}Artist Two`);
  const d1 = await seedDistributor(srv, organizationId, `${prefix}Own Distribution`);
  const d2 = await seedDistributor(
    srv,
    null,
    `${prefix}Library Distribution ${organizationId.slice(0, 8)}`,
  );
  const s1 = await seedStatement(srv, {
    organizationId,
    rightsholderId: rh1,
    distributorId: d1,
    fileName: 'march-2024.csv',
    customName: 'March',
    stmt: { year: 2024, period: 3, cadence: 'M' },
    currency: 'EUR',
    fx: { EUR: '1.1' },
    rows: [
      {
        raw_title: 'Alpha',
        raw_artist: 'Ann',
        isrc: 'USAAA2400001',
        royalty_earnings: '10.5',
        gross_royalty_earnings: '12',
        units: '100',
        country: 'US',
        country_raw: 'United States',
        source: 'Spotify',
        sales_type: 'Streaming',
        payor: 'Spotify AB',
        sales_period_start: '2024-03-01',
        sales_period_end: '2024-03-31',
        royalty_rate: '0.5',
        type_of_right: 'Master',
      },
      {
        raw_title: 'Beta 100%',
        raw_artist: 'Ann',
        royalty_earnings: '2.25',
        units: '10',
        country: 'DE',
        country_raw: 'Germany',
        source: 'Apple Music',
        sales_type: 'Download',
        sales_period_start: '2024-03-15',
        sales_period_end: '2024-03-15',
      },
      { raw_title: 'gamma_x', royalty_earnings: '-1.00', units: '0', payor: '' },
      {
        raw_title: 'Delta\\Path',
        royalty_earnings: '0.000000000001',
        units: '1',
        country: 'US',
        payor: 'spotify ab ltd',
        sales_period_start: '2024-02-29',
        sales_period_end: '2024-02-29',
      },
    ],
  });
  const s2 = await seedStatement(srv, {
    organizationId,
    rightsholderId: rh1,
    distributorId: d2,
    fileName: 'q4-2023.csv',
    stmt: { year: 2023, period: 4, cadence: 'Q' },
    currency: 'USD',
    rows: [
      {
        raw_title: 'Echo',
        royalty_earnings: '100',
        units: '1000',
        country: 'GB',
        source: 'ASCAP',
        sales_period_start: '2023-10-01',
        sales_period_end: '2023-10-31',
      },
      {
        raw_title: 'Foxtrot',
        royalty_earnings: '50',
        units: '500',
        country: 'US',
        sales_period_start: '2023-12-31',
        sales_period_end: '2023-12-31',
      },
    ],
  });
  const s3 = await seedStatement(srv, {
    organizationId,
    rightsholderId: rh2,
    distributorId: d1,
    fileName: 'jan-2024.csv',
    stmt: { year: 2024, period: 1, cadence: 'M' },
    currency: 'GBP',
    fx: {},
    rows: [
      {
        raw_title: 'Golf',
        royalty_earnings: '7',
        units: '7',
        country: 'FR',
        sales_period_start: '2024-01-10',
        sales_period_end: '2024-01-10',
      },
    ],
  });
  return { rh1, rh2, d1, d2, s1, s2, s3 };
}
