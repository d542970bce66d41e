import { router } from '../../trpc/init.ts';
import { getDefaultFxDate } from './getDefaultFxDate.ts';
import { getDefaultFxRates } from './getDefaultFxRates.ts';

export const insightsRouter = router({ getDefaultFxDate, getDefaultFxRates });
