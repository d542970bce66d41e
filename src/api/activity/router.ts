import { router } from '../../trpc/init.ts';
import { byEntity } from './byEntity.ts';
import { feed } from './feed.ts';
import { trackVisit } from './trackVisit.ts';

export const activityRouter = router({ byEntity, feed, trackVisit });
