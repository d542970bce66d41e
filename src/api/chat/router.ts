import { router } from '../../trpc/init.ts';
import { list } from './list.ts';

export const chatRouter = router({ list });
