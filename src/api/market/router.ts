import { router } from '../../trpc/init.ts';
import { getHistory } from './getHistory.ts';
import { getQuotes } from './getQuotes.ts';
import { getTreasuryYields } from './getTreasuryYields.ts';

export const marketRouter = router({ getHistory, getQuotes, getTreasuryYields });
