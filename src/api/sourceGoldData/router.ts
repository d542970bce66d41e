import { router } from '../../trpc/init.ts';
import { deleteEntry } from './delete.ts';
import { list } from './list.ts';
import { upsert } from './upsert.ts';

export const sourceGoldDataRouter = router({ delete: deleteEntry, list, upsert });
