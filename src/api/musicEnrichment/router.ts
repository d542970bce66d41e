import { router } from '../../trpc/init.ts';
import { query } from './query.ts';

export const musicEnrichmentRouter = router({ query });
