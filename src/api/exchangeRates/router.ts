import { router } from '../../trpc/init.ts';
import { get } from './get.ts';

export const exchangeRatesRouter = router({ get });
