// A block refresh reads the facts of the organization's analytics database, brought up to date
// without its catalog table: the refresh is about to change the catalog, so a catalog table built
// first would be built again by the next query. The next query builds it once, with the
// refresh's musical details, and answers from it.
import t from 'tap';
import { analyticsFor } from '../../src/analytics/engine.ts';
import { readFingerprint } from '../../src/analytics/store.ts';
import { refreshBlock } from '../../src/catalog/blocks.ts';
import { m, seedRightsholder, seedStatement } from './helpers.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import type { Outcome } from '../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Catalog After Refresh Org');
const org = owner.organizationId;
const rh = await seedRightsholder(srv, org, 'Sync Artist');
const db = srv.deps.pool;

// the catalog's read for the analytics database (src/analytics/catalog.ts), counted
let catalogReads = 0;
const poolQuery = db.query.bind(db) as (...args: unknown[]) => Promise<unknown>;
(db as { query: unknown }).query = (...args: unknown[]) => {
  const text = typeof args[0] === 'string' ? args[0] : '';
  if (text.includes('FROM musical_details md JOIN catalog_blocks b')) catalogReads++;
  return poolQuery(...args);
};

const tracks = async () => {
  const res: Outcome<any> = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('units')],
      dimensions: [m('track_title')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
      order: { [m('track_title')]: 'asc' },
    },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data;
};

const row = (raw_title: string, units: string) => ({
  raw_title,
  raw_artist: 'Sync Artist',
  units,
  royalty_earnings: '1.00',
});

t.test('a refresh loads the facts alone; the query after it builds the catalog once', async (t) => {
  await seedStatement(srv, { organizationId: org, rightsholderId: rh, rows: [row('Kilo', '3')] });
  await refreshBlock(srv.deps, org, rh);
  t.same(await tracks(), [{ [m('track_title')]: 'Kilo', [m('units')]: '3' }]);

  catalogReads = 0;
  // two spellings of one track: the catalog names both by its musical detail's title
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: rh,
    rows: [row('Kilo', '4'), row('Lima', '5'), row('Lima', '6'), row('LIMA', '7')],
  });
  const result = await refreshBlock(srv.deps, org, rh);
  t.equal(result?.statements, 2, 'the refresh read both statements');
  t.equal(result?.musicalDetails, 2);
  t.equal(catalogReads, 0, 'the refresh did not read the catalog for analytics');
  const facts = analyticsFor(srv.deps).facts(org);
  t.equal(facts.loadedVersion, undefined, 'the catalog table is behind: no version is whole');

  t.same(await tracks(), [
    { [m('track_title')]: 'Kilo', [m('units')]: '7' },
    { [m('track_title')]: 'Lima', [m('units')]: '18' },
  ]);
  t.equal(catalogReads, 1, 'the query after the refresh read the catalog once');
  t.equal(facts.loadedVersion, (await readFingerprint(db, org)).fingerprint.version);

  await tracks();
  t.equal(catalogReads, 1, 'a query with nothing changed reads nothing');
});
