import { router } from '../../trpc/init.ts';
import { getSession } from './getSession.ts';
import { meta } from './meta.ts';
import { query } from './query.ts';
import { queryAsync } from './queryAsync.ts';
import { queryPoll } from './queryPoll.ts';
import { sqlQuery } from './sqlQuery.ts';
import { sqlQueryAsync } from './sqlQueryAsync.ts';
import { sqlQueryPoll } from './sqlQueryPoll.ts';

export const cubeRouter = router({
  getSession,
  meta,
  query,
  queryAsync,
  queryPoll,
  sqlQuery,
  sqlQueryAsync,
  sqlQueryPoll,
});
