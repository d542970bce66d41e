import t from 'tap';
import {
  decodeCursor,
  encodeCursor,
  paginated,
  paginationSchema,
  resolvePage,
} from '../../src/pagination.ts';

const schema = paginationSchema(['name', 'createdAt']);

t.test('defaults exactly as specified', async (t) => {
  t.same(resolvePage(schema.parse(undefined), { sortBy: 'name' }), {
    page: 1,
    limit: 300,
    offset: 0,
    sortBy: 'name',
    sortOrder: 'asc',
  });
  t.same(resolvePage(schema.parse({ page: 3 })), {
    page: 3,
    limit: 200,
    offset: 400,
    sortBy: undefined,
    sortOrder: 'asc',
  });
  t.same(resolvePage(schema.parse({ limit: 2000, sortOrder: 'desc', sortBy: 'createdAt' })), {
    page: 1,
    limit: 2000,
    offset: 0,
    sortBy: 'createdAt',
    sortOrder: 'desc',
  });
});

t.test(
  'limits: 2001 is PAGINATION_LIMIT_EXCEEDED, 0 and unknown sort keys fail validation',
  async (t) => {
    t.throws(() => resolvePage(schema.parse({ limit: 2001 })), {
      name: 'AppError',
      errorCode: 'PAGINATION_LIMIT_EXCEEDED',
      code: 'BAD_REQUEST',
    });
    t.equal(schema.safeParse({ limit: 0 }).success, false);
    t.equal(schema.safeParse({ page: 0 }).success, false);
    t.equal(schema.safeParse({ sortBy: 'password' }).success, false);
    t.equal(schema.safeParse({ sortOrder: 'sideways' }).success, false);
  },
);

t.test('an unknown sortBy names the fields the list accepts', async (t) => {
  const result = schema.safeParse({ sortBy: 'password' });
  t.equal(result.error?.issues[0]?.message, 'sortBy must be one of: name, createdAt');
  t.same(result.error?.issues[0]?.path, ['sortBy']);
});

t.test('the envelope', async (t) => {
  const page = resolvePage(schema.parse({ page: 2, limit: 10 }));
  t.same(paginated(['k'], page, 21).pagination, {
    page: 2,
    limit: 10,
    total: 21,
    totalPages: 3,
    hasNext: true,
    hasPrev: true,
  });
  t.same(paginated([], resolvePage(schema.parse({ page: 4, limit: 10 })), 21).pagination, {
    page: 4,
    limit: 10,
    total: 21,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  t.same(paginated([], resolvePage(undefined), 0).pagination, {
    page: 1,
    limit: 300,
    total: 0,
    totalPages: 0,
    hasNext: false,
    hasPrev: false,
  });
});

t.test('cursors are opaque round trips and reject anything else', async (t) => {
  const c = encodeCursor(['2026-01-01T00:00:00.000Z', 42]);
  t.same(decodeCursor(c, 2), ['2026-01-01T00:00:00.000Z', 42]);
  t.throws(() => decodeCursor(c, 3), { name: 'AppError', errorCode: 'INVALID_CURSOR' });
  t.throws(() => decodeCursor('not a cursor', 2), {
    name: 'AppError',
    errorCode: 'INVALID_CURSOR',
  });
  t.throws(() => decodeCursor(encodeCursor([{} as never, 1]), 2), {
    name: 'AppError',
    errorCode: 'INVALID_CURSOR',
  });
});
