import { router } from '../../trpc/init.ts';
import { getFetchingCoverageByRightsholders } from './getFetchingCoverageByRightsholders.ts';
import { inQueueCount } from './inQueueCount.ts';
import { list } from './list.ts';
import { refetchByBlock } from './refetchByBlock.ts';
import { reprocessSkippedByBlock } from './reprocessSkippedByBlock.ts';
import { stopFetchingByBlock } from './stopFetchingByBlock.ts';

export const fetchingRouter = router({
  getFetchingCoverageByRightsholders,
  inQueueCount,
  list,
  refetchByBlock,
  reprocessSkippedByBlock,
  stopFetchingByBlock,
});
