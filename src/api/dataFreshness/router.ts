import { router } from '../../trpc/init.ts';
import { checkEarnings } from './checkEarnings.ts';
import { checkProducts } from './checkProducts.ts';
import { ingestionStats } from './ingestionStats.ts';
import { isReady } from './isReady.ts';

export const dataFreshnessRouter = router({
  checkEarnings,
  checkProducts,
  ingestionStats,
  isReady,
});
