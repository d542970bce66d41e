// cube.meta and GET /docs/cube-schema.json: one object, read from the model, the latter without auth.
import t from 'tap';
import { model } from '../../../src/analytics/model.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Meta Org');

t.test('cube.meta lists the view with every member', async (t) => {
  const res = await owner.client.query('cube.meta', { organizationId: owner.organizationId });
  t.equal(res.ok, true);
  const [view] = res.data.cubes;
  t.match(view, {
    name: 'analytics_full_view',
    type: 'view',
    title: 'Analytics Full View',
    isVisible: true,
    public: true,
  });
  t.equal(view.measures.length, model.measures.length);
  t.equal(view.dimensions.length, model.dimensions.length);
  t.match(
    view.dimensions.find(
      (d: { name: string }) => d.name === 'analytics_full_view.sales_period_start',
    ),
    { type: 'time', shortTitle: 'Sales Period Start' },
  );
  t.match(
    view.dimensions.find((d: { name: string }) => d.name === 'analytics_full_view.stmt_year'),
    { type: 'number', formatDescription: { name: 'number' } },
  );
  t.match(
    view.measures.find((d: { name: string }) => d.name === 'analytics_full_view.units'),
    { type: 'number', aggType: 'sum', cumulative: false },
  );
});

t.test('GET /docs/cube-schema.json: the same data, no authentication', async (t) => {
  const res = await fetch(`${srv.url}/docs/cube-schema.json`);
  t.equal(res.status, 200);
  const meta = await owner.client.query('cube.meta', { organizationId: owner.organizationId });
  t.same(await res.json(), meta.data);
});

t.test('cube.meta needs a member of the organization', async (t) => {
  t.match(await srv.anonymous.query('cube.meta', { organizationId: owner.organizationId }), {
    ok: false,
    error: { data: { code: 'UNAUTHORIZED' } },
  });
  const other = await newOrganization(srv, 'Elsewhere');
  t.match(
    await other.client
      .with({ 'x-organization-id': owner.organizationId })
      .query('cube.meta', { organizationId: owner.organizationId }),
    {
      ok: false,
      error: { data: { code: 'FORBIDDEN' } },
    },
  );
});
