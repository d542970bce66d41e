import { router } from '../../trpc/init.ts';
import { listGlobal } from './listGlobal.ts';

export const payorRouter = router({ listGlobal });
