import { router } from '../../trpc/init.ts';
import { deleteKey } from './delete.ts';
import { update } from './update.ts';

export const apiKeyRouter = router({ update, delete: deleteKey });
