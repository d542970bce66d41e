// sourceGoldData.*: the shipped rows, upsert by id or by normalized raw value, delete, list, and
// the resolver using a new row at once.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { AppError } from '../../../src/errors.ts';
import { upsertGoldData } from '../../../src/lookups/goldData.ts';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Gold Org');
const op = (await outsider(srv, owner.organizationId, 'c2_superadmin')).client;

t.test('platform operators only', async (t) => {
  isError(
    t,
    await owner.client.query('sourceGoldData.list', {}),
    'FORBIDDEN',
    'PLATFORM_ROLE_REQUIRED',
  );
  isError(
    t,
    await owner.client.mutate('sourceGoldData.upsert', { rawValue: 'x' }),
    'FORBIDDEN',
    'PLATFORM_ROLE_REQUIRED',
  );
  isError(
    t,
    await owner.client.mutate('sourceGoldData.delete', { id: randomUUID() }),
    'FORBIDDEN',
    'PLATFORM_ROLE_REQUIRED',
  );
});

t.test('list: the shipped rows, searchable, in the shared envelope', async (t) => {
  const all = data(await op.query('sourceGoldData.list'));
  t.equal(all.pagination.total, 180);
  t.equal(all.data[0].rawValue, '7digital', 'sorted by normalized raw value');
  const found = data(
    await op.query('sourceGoldData.list', {
      search: 'tencent',
      pagination: { page: 1, limit: 10, sortBy: 'rawValue', sortOrder: 'asc' },
    }),
  );
  t.same(
    found.data.map((r: any) => r.rawValue),
    ['JOOX', 'Kugou', 'Kuwo', 'QQ Music', 'Tencent Music Entertainment'],
  );
  t.match(found.data[3], {
    rawValue: 'QQ Music',
    rawValueNormalized: 'qq music',
    earningsSource: 'QQ Music',
    earningsCategory: 'streaming',
    parentCompany: 'Tencent Music Entertainment Group',
    collectionSource: null,
    publisherSource: null,
    notes: null,
  });
  const noted = data(await op.query('sourceGoldData.list', { search: 'Aspiro' }));
  t.equal(noted.data[0].notes, 'The company behind Tidal before 2015');
  // a search with no letter or digit matches literally, not every row
  for (const search of ['%', '!!!', '_'])
    t.equal(data(await op.query('sourceGoldData.list', { search })).pagination.total, 0, search);
});

t.test(
  'upsert without id creates or replaces by normalized raw value; with id changes that row',
  async (t) => {
    const created = data(
      await op.mutate('sourceGoldData.upsert', {
        rawValue: 'Kiosk Music Box',
        earningsSource: 'Kiosk',
        earningsCategory: 'streaming',
        notes: { source: 'test' },
      }),
    );
    t.match(created, {
      rawValueNormalized: 'kiosk music box',
      earningsSource: 'Kiosk',
      parentCompany: null,
      notes: { source: 'test' },
      created: true,
    });
    const resolved = data(
      await op.mutate('lookupSource.resolveWithAI', { original: 'KIOSK MUSIC BOX GmbH' }),
    );
    t.match(
      resolved,
      {
        method: 'gold',
        confidence: 0.97,
        proposal: { earningsSource: 'Kiosk', earningsCategory: 'streaming' },
      },
      'the resolver uses it at once',
    );

    const replaced = data(
      await op.mutate('sourceGoldData.upsert', {
        rawValue: 'KIOSK MUSIC-BOX',
        earningsSource: 'Kiosk Music',
        parentCompany: 'Kiosk Group',
      }),
    );
    t.match(replaced, {
      id: created.id,
      rawValue: 'KIOSK MUSIC-BOX',
      earningsSource: 'Kiosk Music',
      earningsCategory: null,
      parentCompany: 'Kiosk Group',
      created: false,
    });

    const byId = data(
      await op.mutate('sourceGoldData.upsert', {
        id: created.id,
        rawValue: 'Kiosk Box',
        earningsSource: 'Kiosk Music',
        earningsCategory: 'streaming',
      }),
    );
    t.match(byId, { id: created.id, rawValueNormalized: 'kiosk box', created: false });
    isError(
      t,
      await op.mutate('sourceGoldData.upsert', { id: created.id, rawValue: 'Spotify AB' }),
      'CONFLICT',
      'GOLD_DATA_RAW_VALUE_TAKEN',
    );
    isError(
      t,
      await op.mutate('sourceGoldData.upsert', { id: randomUUID(), rawValue: 'Nobody Here' }),
      'NOT_FOUND',
      'GOLD_DATA_NOT_FOUND',
    );
    isError(
      t,
      await op.mutate('sourceGoldData.upsert', { rawValue: '***' }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );

    t.same(data(await op.mutate('sourceGoldData.delete', { id: created.id })), {
      id: created.id,
      deleted: true,
    });
    isError(
      t,
      await op.mutate('sourceGoldData.delete', { id: created.id }),
      'NOT_FOUND',
      'GOLD_DATA_NOT_FOUND',
    );
    t.equal(data(await op.query('sourceGoldData.list')).pagination.total, 180);
  },
);

t.test(
  'an upsert by id racing a new row of the same raw value is GOLD_DATA_RAW_VALUE_TAKEN, not a 500',
  async (t) => {
    const fields = {
      earningsSource: null,
      earningsCategory: null,
      parentCompany: null,
      collectionSource: null,
      publisherSource: null,
      notes: null,
    };
    const { row } = await upsertGoldData(srv.deps.pool, {
      rawValue: 'Racing Radio One',
      ...fields,
    });
    // another writer's row of the key is not committed yet when the update checks the key
    const other = await srv.deps.pool.connect();
    try {
      await other.query('BEGIN');
      await upsertGoldData(other, { rawValue: 'Racing Radio Two', ...fields });
      const update = upsertGoldData(
        srv.deps.pool,
        { rawValue: 'racing radio TWO', ...fields },
        row.id,
      ).then(
        () => 'updated',
        (error: unknown) => (error instanceof AppError ? error.errorCode : String(error)),
      );
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      t.equal(await update, 'GOLD_DATA_RAW_VALUE_TAKEN');
    } finally {
      other.release();
    }
  },
);
