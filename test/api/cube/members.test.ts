// What the members of analytics_full_view compute, row by row, against values worked out by hand.
import t from 'tap';
import { m, seedDistributor, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Cube Members Org');
const org = owner.organizationId;

async function rows(query: Record<string, unknown>): Promise<Record<string, string | null>[]> {
  // loosely typed: the plain envelope (no compareDateRange)
  const res: Outcome<any> = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return (res.data.data as Record<string, string | null>[]).map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k.replace('analytics_full_view.', ''), v]),
    ),
  );
}

t.test('rights types: a type of right naming two kinds is the more specific one', async (t) => {
  const rh = await seedRightsholder(srv, org, 'Rights Label');
  const d = await seedDistributor(srv, org, 'Rights Dist');
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: rh,
    distributorId: d,
    stmt: { year: 2024, period: 1, cadence: 'Q' },
    rows: [
      { raw_title: 'T1', type_of_right: 'Master Sync', royalty_earnings: '1000' },
      {
        raw_title: 'T2',
        type_of_right: 'Neighbouring Rights Performance',
        royalty_earnings: '20.5',
      },
      { raw_title: 'T3', type_of_right: 'Sound Recording Performance', royalty_earnings: '3' },
      { raw_title: 'T4', type_of_right: 'Performance', royalty_earnings: '4' },
      { raw_title: 'T5', type_of_right: 'Mechanical', royalty_earnings: '5' },
      { raw_title: 'T6', type_of_right: 'Master', royalty_earnings: '6' },
      { raw_title: 'T7', type_of_right: 'Neighboring Rights', royalty_earnings: '7' },
      { raw_title: 'T8', type_of_right: 'Publishing Sync', royalty_earnings: '8' },
    ],
  });
  const got = await rows({
    dimensions: [m('track_title_raw'), m('primary_rights_type'), m('secondary_rights_type')],
    measures: [m('royalty_earnings_usd')],
    filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
    order: { [m('track_title_raw')]: 'asc' },
  });
  t.same(
    got.map((r) => [
      r.track_title_raw,
      r.primary_rights_type,
      r.secondary_rights_type,
      r.royalty_earnings_usd,
    ]),
    [
      ['T1', 'Master', 'Synchronization', '1000'],
      ['T2', 'Neighboring', 'Neighboring', '20.5'],
      ['T3', 'Master', 'Performance', '3'],
      ['T4', 'Publishing', 'Performance', '4'],
      ['T5', 'Publishing', 'Mechanical', '5'],
      ['T6', 'Master', 'Sound Recording', '6'],
      ['T7', 'Neighboring', 'Neighboring', '7'],
      ['T8', 'Publishing', 'Synchronization', '8'],
    ],
  );
  t.same(
    await rows({
      dimensions: [m('primary_rights_type')],
      measures: [m('royalty_earnings_usd'), m('statement_row_count')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
      order: { [m('primary_rights_type')]: 'asc' },
    }),
    [
      { primary_rights_type: 'Master', royalty_earnings_usd: '1009', statement_row_count: '3' },
      {
        primary_rights_type: 'Neighboring',
        royalty_earnings_usd: '27.5',
        statement_row_count: '2',
      },
      { primary_rights_type: 'Publishing', royalty_earnings_usd: '17', statement_row_count: '3' },
    ],
    'a master sync fee is master income, not publishing',
  );
});
